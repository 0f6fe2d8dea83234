package toolkit

import (
	"math"
	"strconv"
)

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
