package jsonrpc

import (
	"strconv"
	"unicode/utf8"
)

// AppendString appends s to dst as a JSON string, quotes included
// (RFC 8259 §7): the quote, the backslash and control bytes are escaped,
// and bytes that are not UTF-8 become U+FFFD, so the output is valid JSON
// whatever s holds.
func AppendString[T ~string | ~[]byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	dst = AppendEscaped(dst, s)
	return append(dst, '"')
}

// AppendEscaped is [AppendString] without the quotes, for text assembled
// from several pieces inside one JSON string.
func AppendEscaped[T ~string | ~[]byte](dst []byte, s T) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			// At most four bytes: the conversion of a []byte stays on
			// the stack.
			r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	return append(dst, s[start:]...)
}

// AppendError appends the JSON-RPC error object {"code": code, "message":
// msg} (JSON-RPC 2.0 §5.1), its message escaped as AppendString does.
func AppendError[T ~string | ~[]byte](dst []byte, code int64, msg T) []byte {
	dst = strconv.AppendInt(append(dst, `{"code":`...), code, 10)
	dst = AppendString(append(dst, `,"message":`...), msg)
	return append(dst, '}')
}
