package h1

import (
	"errors"
	"strconv"
)

// ErrIncomplete is returned by [ParseRequestHead] and [ParseResponseHead],
// with n == 0, when buf holds a valid but unfinished head: read more bytes,
// append them to buf and parse again from the start. It is never returned
// once the head is certain to break a rule or exceed a [Limits] bound; those
// are reported as an [*Error] at once.
var ErrIncomplete = errors.New("h1: incomplete head")

// Error is a protocol error in a message head or chunked body. Status is
// the response a server sends for it (400, 414, 431, 501 or 505) before
// closing the connection, and Reason is a short lowercase phrase that is
// safe to send to the peer, for example as the body of
// [AppendErrorResponse].
//
// For [ParseResponseHead] the status classifies the fault the same way; a
// client or gateway answers its own peer 502 whatever the status is.
//
// The parsers return shared *Error values so that failing costs no
// allocation: compare them with errors.As and read their fields, never
// modify them.
type Error struct {
	Status int
	Reason string
}

// Error returns "h1: <status> <reason>".
func (e *Error) Error() string {
	return "h1: " + strconv.Itoa(e.Status) + " " + e.Reason
}

// Request line and version.
var (
	errLeadingLines  = &Error{400, "too many empty lines before request line"}
	errRequestLine   = &Error{400, "malformed request line"}
	errMethod        = &Error{400, "invalid method"}
	errTarget        = &Error{400, "invalid request target"}
	errTargetTooLong = &Error{414, "request target too long"}
	errVersionSyntax = &Error{400, "malformed HTTP version"}
	errVersion       = &Error{505, "HTTP version not supported"}
)

// Status line.
var (
	errStatusLine      = &Error{502, "malformed status line"}
	errStatusCode      = &Error{502, "invalid status code"}
	errResponseVersion = &Error{502, "unsupported HTTP version in response"}
)

// Field lines and the head as a whole.
var (
	errLineEnd        = &Error{400, "malformed line ending"}
	errObsFold        = &Error{400, "obsolete line folding"}
	errHeaderName     = &Error{400, "invalid header name"}
	errHeaderValue    = &Error{400, "invalid header value"}
	errHeadTooLarge   = &Error{431, "header section too large"}
	errTooManyHeaders = &Error{431, "too many header fields"}
)

// Framing and semantics (RFC 9112 §6, RFC 9110 §7.2).
var (
	errContentLength  = &Error{400, "invalid Content-Length"}
	errContentLengths = &Error{400, "conflicting Content-Length values"}
	errTEWithCL       = &Error{400, "Transfer-Encoding with Content-Length"}
	errTEHTTP10       = &Error{400, "Transfer-Encoding in an HTTP/1.0 message"}
	errTEList         = &Error{400, "malformed Transfer-Encoding"}
	errTENotChunked   = &Error{400, "chunked is not the final transfer coding"}
	errTEChunkedTwice = &Error{400, "chunked applied more than once"}
	errTEUnsupported  = &Error{501, "unsupported transfer coding"}
	errNoHost         = &Error{400, "missing Host header"}
	errManyHosts      = &Error{400, "multiple Host headers"}
	errHost           = &Error{400, "invalid Host header"}
)

// Chunked bodies (RFC 9112 §7.1).
var (
	errChunkSize       = &Error{400, "invalid chunk size"}
	errChunkTooLarge   = &Error{400, "chunk size too large"}
	errChunkExt        = &Error{400, "invalid chunk extension"}
	errChunkLine       = &Error{400, "chunk size line too long"}
	errChunkData       = &Error{400, "missing CRLF after chunk data"}
	errChunkOverhead   = &Error{400, "too much chunk framing overhead"}
	errTrailerTooLarge = &Error{431, "trailer section too large"}
	errTooManyTrailers = &Error{431, "too many trailer fields"}
)
