package toolkit

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// appendString appends s to dst as a JSON string, quotes included
// (RFC 8259 §7): quote, backslash and control characters are escaped, and
// bytes that are not UTF-8 become U+FFFD, so the output is always valid
// JSON whatever the input.
func appendString(dst, s []byte) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s)
	return append(dst, '"')
}

// appendEscaped is appendString without the quotes, for text assembled
// from several pieces inside one JSON string.
func appendEscaped(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
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

// appendNumber appends f the way JavaScript's Number#toString writes it,
// which is what MCP clients print: plain decimals between 1e-7 and 1e21
// (5, 0.5, 0.30000000000000004) and exponents outside (1e+21, 1.5e-8).
// f must be finite.
func appendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0') // and -0 too, as JavaScript prints it
	}
	if a := math.Abs(f); a >= 1e-7 && a < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	n := len(dst)
	dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	// Go writes at least two exponent digits (1e+06), JavaScript one.
	for i := n; i+3 < len(dst); i++ {
		if dst[i] == 'e' && dst[i+2] == '0' {
			return append(dst[:i+2], dst[i+3:]...)
		}
	}
	return dst
}

// appendInt appends n in decimal.
func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// scanner finds where a JSON value that arrives in pieces ends, without
// parsing it: it counts the nesting of objects and arrays outside
// strings. It tells the toolkit that a request's params are complete
// before the END that follows them, since an MCP server may wait for the
// reply before it ends its side. A scalar top-level value has no closing
// bracket, so for one the scanner never reports done and the END decides.
type scanner struct {
	depth    int32
	started  bool // the value's first character was seen
	scalar   bool // the value is not an object or array
	inString bool
	escaped  bool
	done     bool
}

// feed scans the next piece. Once the value is complete it returns how
// many bytes of b belong to it, and -1 while it is not.
func (s *scanner) feed(b []byte) int {
	if s.done || s.scalar {
		return -1
	}
	for i, c := range b {
		switch {
		case s.inString:
			switch {
			case s.escaped:
				s.escaped = false
			case c == '\\':
				s.escaped = true
			case c == '"':
				s.inString = false
			}
		case c == '"':
			if !s.started {
				s.scalar = true
				return -1
			}
			s.inString = true
		case c == '{' || c == '[':
			s.started = true
			s.depth++
		case c == '}' || c == ']':
			s.depth--
			if s.depth <= 0 {
				s.done = true
				return i + 1
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			if !s.started {
				s.scalar = true
				return -1
			}
		}
	}
	return -1
}

// appendPercentDecoded appends s with its %XX escapes decoded (RFC 3986
// §2.1), reporting false when an escape is malformed.
func appendPercentDecoded(dst, s []byte) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			dst = append(dst, c)
			continue
		}
		if i+2 >= len(s) {
			return dst, false
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return dst, false
		}
		dst = append(dst, hi<<4|lo)
		i += 2
	}
	return dst, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
