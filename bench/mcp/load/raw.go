package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
)

// The raw client (-client raw, the default) speaks HTTP/1.1 on its own
// sockets so that the load generator costs little CPU per request: on a
// small machine it shares a core with the upstream, and every µs it spends
// is one the upstream cannot.
//
//   - Each worker owns one keep-alive TCP connection, dialed on first use
//     and redialed after an I/O error, a timeout or a "Connection: close";
//     one event loop drives them all (loop.go).
//   - The request bytes (request line, headers with the session's
//     Mcp-Session-Id and Mcp-Protocol-Version, Content-Length, body) are
//     built once per (worker, session); a request only rewrites the
//     fixed-width JSON-RPC id, and for echo the text "m<id>", in place.
//   - The response is read minimally: the status line, three headers
//     (Content-Length, Transfer-Encoding: chunked, Content-Type) and
//     Connection: close, then the body by its length, its chunks or to
//     EOF (parseResponse, over the bytes received so far). A JSON body is
//     checked as is; an event stream's events are scanned for the
//     response (see sseResponse).
//   - The JSON-RPC check (id, no error, echoed text or tool count) is the
//     one the net/http client uses (check).

// idDigits is the width of every JSON-RPC id: ids are idFloor + w·idStride
// + n for worker w and its n-th request, so all have 16 decimal digits
// (below 2^53, exact in any JSON parser) and can be patched in place.
const (
	idDigits = 16
	idFloor  = int64(1_000_000_000_000_000)
	idStride = int64(10_000_000_000)
	// maxWorkers keeps every id within idDigits digits.
	maxWorkers = 80_000
)

// requestID is the n-th id (n ≥ 1) of worker w.
func requestID(w int, n int64) int64 { return idFloor + int64(w)*idStride + n }

// putID writes id as exactly idDigits decimal digits into b.
func putID(b []byte, id int64) {
	for i := idDigits - 1; i >= 0; i-- {
		b[i] = byte('0' + id%10)
		id /= 10
	}
}

// target is the endpoint the raw client dials.
type target struct {
	addr string // host:port
	host string // the Host header
	path string // the request target
}

func parseTarget(raw string) (target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return target{}, err
	}
	if u.Scheme != "http" {
		return target{}, fmt.Errorf("-client raw speaks http only, not %q", u.Scheme)
	}
	t := target{addr: u.Host, host: u.Host, path: u.RequestURI()}
	if u.Port() == "" {
		t.addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return t, nil
}

// template is one prebuilt request and where its id digits sit.
type template struct {
	buf    []byte
	idAt   []int // offsets of the idDigits-wide id copies in buf
	bodyAt int   // offset of the JSON body
}

// newTemplate builds the request for session s with a placeholder id.
func (g *generator) newTemplate(s session) *template {
	body := g.request(nil, idFloor)
	b := make([]byte, 0, 256+len(body))
	b = append(b, "POST "...)
	b = append(b, g.target.path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, g.target.host...)
	// MCP.md §1.1 rule 1: Accept lists both types.
	b = append(b, "\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"...)
	if s.id != "" {
		b = append(b, "Mcp-Session-Id: "...)
		b = append(b, s.id...)
		b = append(b, "\r\n"...)
	}
	if s.version != "" {
		b = append(b, "Mcp-Protocol-Version: "...)
		b = append(b, s.version...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	t := &template{bodyAt: len(b)}
	b = append(b, body...)
	t.buf = b
	// The placeholder's digits appear where the id is (and in the echo
	// text "m<id>"), nowhere else: the rest of the body is fixed text.
	ph := strconv.AppendInt(nil, idFloor, 10)
	for off := t.bodyAt; ; {
		i := bytes.Index(b[off:], ph)
		if i < 0 {
			break
		}
		t.idAt = append(t.idAt, off+i)
		off += i + len(ph)
	}
	return t
}

// stamp patches id into every id position of the template.
func (t *template) stamp(id int64) []byte {
	for _, at := range t.idAt {
		putID(t.buf[at:at+idDigits], id)
	}
	return t.buf
}

// response is one parsed HTTP response; ctype and body point into the
// connection's input buffer (or, chunked, into its de-chunking buffer).
type response struct {
	status int
	ctype  []byte
	body   []byte
	keep   bool // the connection may carry the next request
	size   int  // bytes of the input the response took
}

var (
	hContentLength    = []byte("content-length")
	hTransferEncoding = []byte("transfer-encoding")
	hContentType      = []byte("content-type")
	hConnection       = []byte("connection")
	errIncomplete     = errors.New("incomplete response")
)

// nextLine returns the line at b[at:] without its LF or CRLF and the
// offset after it, or errIncomplete.
func nextLine(b []byte, at int) ([]byte, int, error) {
	i := bytes.IndexByte(b[at:], '\n')
	if i < 0 {
		return nil, 0, errIncomplete
	}
	l := b[at : at+i]
	if n := len(l); n > 0 && l[n-1] == '\r' {
		l = l[:n-1]
	}
	return l, at + i + 1, nil
}

// parseResponse parses one response at the start of b: the status line,
// Content-Length, Transfer-Encoding: chunked, Content-Type and
// Connection: close, then a body by its length, its chunks (de-chunked
// into *dechunk) or, with neither, to the end of the connection (eof). It
// returns errIncomplete while b does not hold the whole response.
func parseResponse(b []byte, eof bool, dechunk *[]byte) (response, error) {
	var r response
	at := 0
	for {
		l, next, err := nextLine(b, at)
		if err != nil {
			return r, err
		}
		at = next
		// "HTTP/1.1 200 OK"
		if len(l) < 12 || !bytes.HasPrefix(l, []byte("HTTP/1.")) || l[8] != ' ' {
			return r, fmt.Errorf("bad status line %.100q", l)
		}
		r.status = 0
		for _, c := range l[9:12] {
			if !isDigit(c) {
				return r, fmt.Errorf("bad status line %.100q", l)
			}
			r.status = r.status*10 + int(c-'0')
		}
		r.keep = l[7] == '1'
		if r.status >= 200 || r.status == 101 {
			break
		}
		// A 1xx interim response: skip its header section.
		for {
			if l, at, err = nextLine(b, at); err != nil {
				return r, err
			} else if len(l) == 0 {
				break
			}
		}
	}
	length, chunked := int64(-1), false
	for {
		l, next, err := nextLine(b, at)
		if err != nil {
			return r, err
		}
		at = next
		if len(l) == 0 {
			break
		}
		colon := bytes.IndexByte(l, ':')
		if colon <= 0 {
			return r, fmt.Errorf("bad header line %.100q", l)
		}
		name, value := l[:colon], bytes.TrimSpace(l[colon+1:])
		switch {
		case bytes.EqualFold(name, hContentLength):
			if length = parseDecimal(value); length < 0 {
				return r, fmt.Errorf("bad content-length %.40q", value)
			}
		case bytes.EqualFold(name, hTransferEncoding):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, hContentType):
			r.ctype = value
		case bytes.EqualFold(name, hConnection):
			if bytes.EqualFold(value, []byte("close")) {
				r.keep = false
			}
		}
	}
	switch {
	case r.status == 204 || r.status == 304 || r.status == 101:
		r.size = at
	case chunked:
		// RFC 9112 §7.1: size[;ext] CRLF data CRLF ... 0 CRLF trailers CRLF.
		d := (*dechunk)[:0]
		for {
			l, next, err := nextLine(b, at)
			if err != nil {
				return r, err
			}
			if i := bytes.IndexByte(l, ';'); i >= 0 {
				l = l[:i]
			}
			size := parseHex(bytes.TrimSpace(l))
			if size < 0 {
				return r, fmt.Errorf("bad chunk size %.40q", l)
			}
			at = next
			if size == 0 {
				for {
					if l, at, err = nextLine(b, at); err != nil {
						return r, err
					} else if len(l) == 0 {
						break
					}
				}
				break
			}
			if int64(len(b)-at) < size+2 {
				return r, errIncomplete
			}
			d = append(d, b[at:at+int(size)]...)
			at += int(size)
			if b[at] == '\r' {
				at++
			}
			if b[at] != '\n' {
				return r, errors.New("chunk not followed by CRLF")
			}
			at++
		}
		*dechunk = d
		r.body, r.size = d, at
	case length >= 0:
		if int64(len(b)-at) < length {
			return r, errIncomplete
		}
		r.body, r.size = b[at:at+int(length)], at+int(length)
	default:
		// Delimited by the end of the connection.
		if !eof {
			return r, errIncomplete
		}
		r.body, r.size, r.keep = b[at:], len(b), false
	}
	return r, nil
}

// parseHex parses a chunk size of at most 15 hex digits, or returns -1.
func parseHex(b []byte) int64 {
	if len(b) == 0 || len(b) > 15 {
		return -1
	}
	var n int64
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int64(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int64(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int64(c-'A'+10)
		default:
			return -1
		}
	}
	return n
}

// sseResponse returns the data of the event that is the JSON-RPC response
// to id, skipping priming events (no data), notifications and requests.
// Multi-line data is joined with "\n" into scratch, which is returned for
// reuse.
func sseResponse(body []byte, id int64, scratch []byte) ([]byte, []byte, error) {
	var data []byte
	multi := false
	for len(body) > 0 {
		var l []byte
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			l, body = body[:i], body[i+1:]
		} else {
			l, body = body, nil
		}
		if n := len(l); n > 0 && l[n-1] == '\r' {
			l = l[:n-1]
		}
		if len(l) == 0 {
			if len(data) > 0 && isResponseTo(data, id) {
				return data, scratch, nil
			}
			data, multi = nil, false
			continue
		}
		d, ok := bytes.CutPrefix(l, []byte("data:"))
		if !ok {
			continue
		}
		d = bytes.TrimPrefix(d, []byte(" "))
		switch {
		case data == nil:
			data = d
		case !multi:
			scratch = append(append(append(scratch[:0], data...), '\n'), d...)
			data, multi = scratch, true
		default:
			scratch = append(append(scratch, '\n'), d...)
			data = scratch
		}
	}
	if len(data) > 0 && isResponseTo(data, id) {
		return data, scratch, nil
	}
	return nil, scratch, errors.New("SSE stream ended before the response")
}

// isResponseTo reports whether the JSON message has no method and the id.
func isResponseTo(data []byte, id int64) bool {
	if bytes.Contains(data, []byte(`"method"`)) {
		return false
	}
	var digits [20]byte
	want := strconv.AppendInt(digits[:0], id, 10)
	i := bytes.Index(data, []byte(`"id":`))
	if i < 0 {
		return false
	}
	rest := bytes.TrimLeft(data[i+5:], " ")
	return bytes.HasPrefix(rest, want) && (len(rest) == len(want) || !isDigit(rest[len(want)]))
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// parseDecimal parses a non-negative decimal of at most 18 digits, or
// returns -1.
func parseDecimal(b []byte) int64 {
	if len(b) == 0 || len(b) > 18 {
		return -1
	}
	var n int64
	for _, c := range b {
		if !isDigit(c) {
			return -1
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
