package jsonrpc

import (
	"errors"
	"strconv"
)

// Sentinels a [*SyntaxError] matches with errors.Is, one per kind of
// failure, and the errors of the value helpers.
var (
	// ErrSyntax reports a message that is not JSON: a byte that cannot
	// appear where it does. encoding/json rejects the same messages.
	ErrSyntax = errors.New("jsonrpc: invalid JSON")
	// ErrUnexpectedEOF reports a message that ended inside its value
	// (see [Tracker.Finish]).
	ErrUnexpectedEOF = errors.New("jsonrpc: unexpected end of JSON input")
	// ErrDepth reports objects and arrays nested deeper than
	// [Options.MaxDepth].
	ErrDepth = errors.New("jsonrpc: exceeded max depth")
	// ErrInvalidUTF8 reports a string that is not valid UTF-8, with
	// [Options.StrictUTF8] set.
	ErrInvalidUTF8 = errors.New("jsonrpc: invalid UTF-8 in string")
	// ErrDuplicate reports a second top-level jsonrpc, id, method, params,
	// result or error member, with [Options.RejectDuplicates] set.
	ErrDuplicate = errors.New("jsonrpc: duplicate member")

	// ErrNotString reports a value given to [Unquote], [Method] or
	// [Version] that is not a JSON string.
	ErrNotString = errors.New("jsonrpc: value is not a string")
	// ErrInvalidID reports an id that is not a string, a number or null
	// (JSON-RPC 2.0 §4).
	ErrInvalidID = errors.New("jsonrpc: id is not a string, number or null")
	// ErrTooLong reports a string that [UnquoteTo] cannot decode into its
	// buffer without growing it.
	ErrTooLong = errors.New("jsonrpc: string too long for its buffer")
	// ErrEventTooLarge reports an event-stream line or event over
	// [EventReader.Limit].
	ErrEventTooLarge = errors.New("jsonrpc: event too large")
)

// errCode says what a [SyntaxError] is about. Codes up to codeEnd are
// encoding/json's syntax errors, worded as it words them.
type errCode uint8

const (
	codeValue errCode = iota
	codeKey
	codeColon
	codeObjectSep
	codeArraySep
	codeString
	codeEscape
	codeHex
	codeNumber
	codeDot
	codeExponent
	codeLiteral
	codeEnd
	codeEOF
	codeDepth
	codeUTF8
	codeDuplicate
)

// contexts end encoding/json's "invalid character 'x' ..." messages.
var contexts = [...]string{
	codeValue:     "looking for beginning of value",
	codeKey:       "looking for beginning of object key string",
	codeColon:     "after object key",
	codeObjectSep: "after object key:value pair",
	codeArraySep:  "after array element",
	codeString:    "in string literal",
	codeEscape:    "in string escape code",
	codeHex:       `in \u hexadecimal character escape`,
	codeNumber:    "in numeric literal",
	codeDot:       "after decimal point in numeric literal",
	codeExponent:  "in exponent of numeric literal",
	codeEnd:       "after top-level value",
}

// SyntaxError is a message the [Tracker] rejects. Offset is the offset,
// from the start of the message, of the byte that broke the rule: for an
// invalid UTF-8 sequence its first byte, for a duplicate member the
// opening quote of its key, and for a message that ended too soon its
// length. (encoding/json's SyntaxError.Offset counts the bytes read
// including the bad one, so it is this Offset plus one.)
//
// Match the kind with errors.Is against [ErrSyntax], [ErrUnexpectedEOF],
// [ErrDepth], [ErrInvalidUTF8] or [ErrDuplicate].
type SyntaxError struct {
	Offset int64
	code   errCode
	c      byte   // the offending byte
	lit    string // codeLiteral: the literal; codeDuplicate: the member
	want   byte   // codeLiteral: the byte expected instead of c
}

// Error returns "jsonrpc: offset <n>: <reason>", the reason worded as
// encoding/json words it, for example
// "jsonrpc: offset 17: invalid character '}' after object key".
func (e *SyntaxError) Error() string {
	s := "jsonrpc: offset " + strconv.FormatInt(e.Offset, 10) + ": "
	switch e.code {
	case codeEOF:
		return s + "unexpected end of JSON input"
	case codeDepth:
		return s + "exceeded max depth"
	case codeUTF8:
		return s + "invalid UTF-8 in string"
	case codeDuplicate:
		return s + "duplicate member " + strconv.Quote(e.lit)
	case codeLiteral:
		return s + "invalid character " + quoteChar(e.c) + " in literal " + e.lit +
			" (expecting " + quoteChar(e.want) + ")"
	}
	return s + "invalid character " + quoteChar(e.c) + " " + contexts[e.code]
}

// Member returns the key of the member a duplicate rejection ([ErrDuplicate])
// found twice, or "" for a rejection of another kind.
func (e *SyntaxError) Member() string {
	if e.code == codeDuplicate {
		return e.lit
	}
	return ""
}

// Is matches e's kind: [ErrSyntax], [ErrUnexpectedEOF], [ErrDepth],
// [ErrInvalidUTF8] or [ErrDuplicate].
func (e *SyntaxError) Is(target error) bool {
	switch e.code {
	case codeEOF:
		return target == ErrUnexpectedEOF
	case codeDepth:
		return target == ErrDepth
	case codeUTF8:
		return target == ErrInvalidUTF8
	case codeDuplicate:
		return target == ErrDuplicate
	}
	return target == ErrSyntax
}

// quoteChar formats c as encoding/json does in its messages.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}
