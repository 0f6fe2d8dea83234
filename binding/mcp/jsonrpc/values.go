package jsonrpc

import (
	"math"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Unquote returns the contents of the JSON string b (quotes included, as
// a [Range] of a string covers), decoded exactly as encoding/json decodes
// strings: escapes resolved, surrogate pairs joined, and lone surrogates
// and invalid UTF-8 bytes each replaced by U+FFFD.
//
// When b holds no escape and is valid UTF-8 (the usual case), the result
// is a sub-slice of b, which it aliases. Otherwise it is written over
// dst[:0], and aliases dst when dst has the room: len(b) bytes suffice
// unless b holds invalid UTF-8 (each bad byte decodes to three).
//
// It returns [ErrNotString] if b does not start and end with a quote and
// [ErrSyntax] if what lies between is not a valid JSON string body.
func Unquote(dst, b []byte) ([]byte, error) {
	s, at, err := stringBody(b)
	if err != nil || at == len(s) {
		return s, err
	}
	return appendUnquoted(append(dst[:0], s[:at]...), s[at:], -1)
}

// UnquoteTo is [Unquote] for a buffer of fixed size: it always writes the
// text over dst[:0], never growing dst and never aliasing b, and returns
// [ErrTooLong] when the text does not fit cap(dst).
func UnquoteTo(dst, b []byte) ([]byte, error) {
	s, at, err := stringBody(b)
	switch {
	case err != nil:
		return nil, err
	case at > cap(dst):
		return nil, ErrTooLong
	case at == len(s):
		return append(dst[:0], s...), nil
	}
	return appendUnquoted(append(dst[:0], s[:at]...), s[at:], cap(dst))
}

// stringBody returns what lies between the quotes of the JSON string b,
// and the offset in it of the first byte that does not decode to itself
// (an escape, or invalid UTF-8), or len(s) when there is none.
func stringBody(b []byte) (s []byte, at int, err error) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return nil, 0, ErrNotString
	}
	s = b[1 : len(b)-1]
	multi := -1 // the first byte of a multi-byte sequence, valid or not
	for i, c := range s {
		switch {
		case c == '\\':
			if multi >= 0 {
				return s, multi, nil
			}
			return s, i, nil
		case c < 0x20, c == '"':
			return nil, 0, ErrSyntax
		case c >= utf8.RuneSelf && multi < 0:
			multi = i
		}
	}
	if multi < 0 || utf8.Valid(s[multi:]) {
		return s, len(s), nil
	}
	return s, multi, nil
}

// appendUnquoted appends the decoded string body s to dst, following
// encoding/json's unquoteBytes. With limit at or above zero it never
// lets dst grow past limit bytes, and returns [ErrTooLong] instead.
func appendUnquoted(dst, s []byte, limit int) ([]byte, error) {
	if limit < 0 {
		limit = math.MaxInt
	}
	for r := 0; r < len(s); {
		var rr rune
		switch c := s[r]; {
		case plainASCII(c):
			// A run of plain ASCII goes over whole.
			run := r
			for r++; r < len(s) && plainASCII(s[r]); r++ {
			}
			if len(dst)+r-run > limit {
				return nil, ErrTooLong
			}
			dst = append(dst, s[run:r]...)
			continue
		case c == '\\':
			if r+1 == len(s) {
				return nil, ErrSyntax
			}
			if e := s[r+1]; e != 'u' {
				if c = unescapes[e]; c == 0 {
					return nil, ErrSyntax
				}
				if len(dst) >= limit {
					return nil, ErrTooLong
				}
				dst = append(dst, c)
				r += 2
				continue
			}
			if rr = getu4(s[r:]); rr < 0 {
				return nil, ErrSyntax
			}
			r += 6
			if utf16.IsSurrogate(rr) {
				if rr = utf16.DecodeRune(rr, getu4(s[r:])); rr != unicode.ReplacementChar {
					r += 6
				}
			}
		case c < 0x20, c == '"':
			return nil, ErrSyntax
		default:
			var size int
			rr, size = utf8.DecodeRune(s[r:]) // RuneError for a bad byte, as encoding/json
			r += size
		}
		if len(dst)+utf8.RuneLen(rr) > limit {
			return nil, ErrTooLong
		}
		dst = utf8.AppendRune(dst, rr)
	}
	return dst, nil
}

// plainASCII reports a byte of a string body that decodes to itself.
func plainASCII(c byte) bool { return c >= 0x20 && c != '\\' && c != '"' && c < utf8.RuneSelf }

// unescapes maps the byte after a backslash to the byte it stands for,
// or 0 when the escape is not one (\u aside).
var unescapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// getu4 decodes the \uXXXX escape at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// Method returns the name in a method member's value b, as [Unquote]
// does: a sub-slice of b unless the name holds escapes (some encoders
// write "tools\/call"), then decoded over dst. A method that is not a
// string (JSON-RPC 2.0 §4) gives [ErrNotString].
func Method(dst, b []byte) ([]byte, error) {
	return Unquote(dst, b)
}

// Version reports whether the jsonrpc member's value b is the string
// "2.0", as JSON-RPC 2.0 §4 requires, however it is escaped.
func Version(b []byte) bool {
	if string(b) == `"2.0"` {
		return true
	}
	if len(b) > 2+3*6 { // "2.0" with every byte escaped
		return false
	}
	var buf [8]byte
	s, err := UnquoteTo(buf[:0], b)
	return err == nil && string(s) == "2.0"
}

// IDKind is the kind of a JSON-RPC id.
type IDKind uint8

// The kinds of id (JSON-RPC 2.0 §4: "a String, Number, or NULL value if
// included").
const (
	IDNone   IDKind = iota // no id: a notification
	IDString               // a string; MCP ids are strings or integers
	IDNumber               // a number
	IDNull                 // null: allowed in responses to unreadable requests
)

var idKindNames = [...]string{"none", "string", "number", "null"}

// String returns the kind's name, for example "number".
func (k IDKind) String() string {
	if int(k) < len(idKindNames) {
		return idKindNames[k]
	}
	return "IDKIND_" + itoa(int(k))
}

// ParseID classifies the id member's value b and returns its canonical
// bytes, so that two ids are the same request's exactly when their kinds
// and canonical bytes are equal:
//
//   - a string's canonical bytes are its contents decoded by [Unquote]
//     (so "a" and "\u0061" are one id), a sub-slice of b or written over
//     dst as Unquote says;
//   - a number's are b itself: JSON allows no leading zeros, so an
//     integer has one spelling (bar "-0"); 1, 1.0 and 1e0 are distinct
//     ids, which JSON-RPC 2.0 §4 lets a server treat them as since numbers
//     "SHOULD NOT contain fractional parts";
//   - null's are b, and an empty b (no id member) gives IDNone.
//
// A gateway should still echo an id to its sender in its original
// spelling, [Tracker.Member]'s range of it. ParseID returns
// [ErrInvalidID] for an object, an array, a boolean or anything that is
// not one JSON value.
func ParseID(dst, b []byte) (IDKind, []byte, error) {
	switch {
	case len(b) == 0:
		return IDNone, nil, nil
	case b[0] == '"':
		s, err := Unquote(dst, b)
		if err != nil {
			return IDNone, nil, ErrInvalidID
		}
		return IDString, s, nil
	case string(b) == "null":
		return IDNull, b, nil
	case validNumber(b):
		return IDNumber, b, nil
	}
	return IDNone, nil, ErrInvalidID
}

// validNumber reports whether b is exactly one JSON number.
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && digits[b[i]] {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i == len(b) || !digits[b[i]] {
			return false
		}
		for i < len(b) && digits[b[i]] {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i == len(b) || !digits[b[i]] {
			return false
		}
		for i < len(b) && digits[b[i]] {
			i++
		}
	}
	return i == len(b)
}
