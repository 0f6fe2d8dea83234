package h1

import (
	"encoding/binary"
	"math/bits"
)

// Character classes, one bit each in a 256-entry table so that every
// scanning loop costs one load and one test per byte.
const (
	// clToken is tchar, RFC 9110 §5.6.2: the bytes of methods, field
	// names, transfer codings and chunk-extension names.
	clToken uint8 = 1 << iota
	// clValue is field-vchar, SP and HTAB, RFC 9110 §5.5: VCHAR and
	// obs-text. It is also the reason-phrase alphabet (RFC 9112 §4).
	clValue
	// clTarget is a request-target byte: VCHAR or obs-text, no SP and no
	// CTL (RFC 9112 §3.2 is ASCII-only; obs-text is tolerated as nginx and
	// net/http do, since clients send raw UTF-8 paths).
	clTarget
	// clRegName is reg-name without pct-encoded, RFC 3986 §3.2.2:
	// unreserved and sub-delims.
	clRegName
	// clQdtext is qdtext, RFC 9110 §5.6.4.
	clQdtext
)

var class = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		alnum := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
		if alnum || contains("!#$%&'*+-.^_`|~", b) {
			t[c] |= clToken
		}
		if b == '\t' || 0x20 <= b && b != 0x7f {
			t[c] |= clValue
		}
		if 0x20 < b && b != 0x7f {
			t[c] |= clTarget
		}
		if alnum || contains("-._~!$&'()*+,;=", b) {
			t[c] |= clRegName
		}
		if b == '\t' || b == ' ' || b == 0x21 || 0x23 <= b && b <= 0x5b || 0x5d <= b && b != 0x7f {
			t[c] |= clQdtext
		}
	}
	return t
}()

func contains(s string, b byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return true
		}
	}
	return false
}

func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if class[c]&clToken == 0 {
			return false
		}
	}
	return true
}

// unhex returns the value of the hex digit c, or -1.
func unhex(c byte) int64 {
	switch {
	case '0' <= c && c <= '9':
		return int64(c - '0')
	case 'a' <= c && c <= 'f':
		return int64(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return int64(c - 'A' + 10)
	}
	return -1
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// equalFold reports whether b equals lower, ignoring ASCII case. lower
// holds only lowercase letters, digits and '-'. Or-ing 0x20 folds case for
// letters; the only other bytes it maps onto a digit or '-' are control
// bytes (0x10–0x19, CR), which no token or field value contains.
func equalFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if b[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

func isOWS(c byte) bool { return c == ' ' || c == '\t' }

func trimOWS(b []byte) []byte {
	for len(b) > 0 && isOWS(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isOWS(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// NextElement splits the list element of a field value (RFC 9110 §5.6.1)
// that starts at v[i]: it returns the element with OWS trimmed and the
// index after its comma, or len(v)+1 after the last element. Loop with
// "for i := 0; i <= len(v); { e, i = NextElement(v, i) }"; an empty value is
// one empty element. Commas inside quoted strings are not special: none of
// the lists read with it (here, and Accept in the mcp server) can hold one
// and stay valid.
func NextElement(v []byte, i int) (elem []byte, next int) {
	j := i
	for j < len(v) && v[j] != ',' {
		j++
	}
	return trimOWS(v[i:j]), j + 1
}

// validPercent reports whether every '%' in b starts a pct-encoded triplet
// (RFC 3986 §2.1).
func validPercent(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] == '%' {
			if i+2 >= len(b) || unhex(b[i+1]) < 0 || unhex(b[i+2]) < 0 {
				return false
			}
			i += 2
		}
	}
	return true
}

// validAuthority reports whether b is uri-host [":" port] (RFC 3986
// §3.2.2–3.2.3) as a request may carry it in Host or in the target. It is
// stricter than RFC 3986 where the strictness costs nothing real: no
// userinfo (RFC 9110 §4.2.4 says to treat it as an error), no
// pct-encoding in a reg-name, no IPvFuture and no zone identifier in an
// IP-literal. needHost and needPort require those parts to be non-empty.
func validAuthority(b []byte, needHost, needPort bool) bool {
	var host, port []byte
	if len(b) > 0 && b[0] == '[' {
		end := 1
		for end < len(b) && b[end] != ']' {
			end++
		}
		if end == len(b) || !validIPv6(b[1:end]) {
			return false
		}
		host = b[:end+1]
		if rest := b[end+1:]; len(rest) > 0 {
			if rest[0] != ':' {
				return false
			}
			port = rest[1:]
		}
	} else {
		host = b
		for i, c := range b {
			if c == ':' {
				host, port = b[:i], b[i+1:]
				break
			}
		}
		for _, c := range host {
			if class[c]&clRegName == 0 {
				return false
			}
		}
	}
	for _, c := range port {
		if !isDigit(c) {
			return false
		}
	}
	return (!needHost || len(host) > 0) && (!needPort || len(port) > 0)
}

// validIPv6 reports whether b is an IPv6 address in the text forms of
// RFC 4291 §2.2: eight groups of one to four hex digits, or fewer with one
// "::" standing for at least one zero group, the last two groups
// optionally written as a dotted IPv4 address.
func validIPv6(b []byte) bool {
	groups, ellipsis, i := 0, false, 0
	if len(b) >= 2 && b[0] == ':' && b[1] == ':' {
		ellipsis, i = true, 2
	}
	for i < len(b) {
		j := i
		for j < len(b) && j-i < 5 && unhex(b[j]) >= 0 {
			j++
		}
		if j < len(b) && b[j] == '.' {
			if groups > 6 || !validIPv4(b[i:]) {
				return false
			}
			groups += 2
			break
		}
		if j == i || j-i > 4 {
			return false
		}
		groups++
		if i = j; i == len(b) {
			break
		}
		if b[i] != ':' || i+1 == len(b) {
			return false
		}
		i++
		if b[i] == ':' {
			if ellipsis {
				return false
			}
			ellipsis = true
			i++
		}
	}
	if ellipsis {
		return groups <= 7
	}
	return groups == 8
}

// validIPv4 reports whether b is dotted-decimal IPv4: four octets of at
// most 255 without leading zeros.
func validIPv4(b []byte) bool {
	for k := 0; k < 4; k++ {
		if k > 0 {
			if len(b) == 0 || b[0] != '.' {
				return false
			}
			b = b[1:]
		}
		n, v := 0, 0
		for n < len(b) && n < 4 && isDigit(b[n]) {
			v = v*10 + int(b[n]-'0')
			n++
		}
		if n == 0 || n > 3 || v > 255 || n > 1 && b[0] == '0' {
			return false
		}
		b = b[n:]
	}
	return len(b) == 0
}

// SWAR constants: one in each byte's low or high bit.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// skipValue returns the index of the first byte at or after i that is not
// field-vchar, SP or HTAB (RFC 9110 §5.5), or len(b). Eight bytes at a
// time it flags the bytes below 0x20 or equal to 0x7f, with the "has less
// than" and "has zero" tests of Bit Twiddling Hacks. Those flag a byte
// wrongly only above a byte they flag rightly (a borrow runs upward), so
// the lowest flag is exact: it is the CR that ends a value, a bad byte, or
// an HTAB to step over.
func skipValue(b []byte, i int) int {
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		d := x ^ lsb*0x7f
		m := (x-lsb*0x20)&^x&msb | (d-lsb)&^d&msb
		if m == 0 {
			i += 8
			continue
		}
		j := i + bits.TrailingZeros64(m)>>3
		if b[j] != '\t' {
			return j
		}
		i = j + 1
	}
	for i < len(b) && class[b[i]]&clValue != 0 {
		i++
	}
	return i
}

// skipTarget is skipValue for request-target bytes: any byte above SP but
// DEL. Every flagged byte ends the target.
func skipTarget(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		d := x ^ lsb*0x7f
		if m := (x-lsb*0x21)&^x&msb | (d-lsb)&^d&msb; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(b) && class[b[i]]&clTarget != 0 {
		i++
	}
	return i
}
