package server

import (
	"encoding/base64"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// The JSON the server reads is a request body held whole in a buffer slot:
// validJSON checks it once (RFC 8259), and the helpers below then walk it
// without allocating, on the assumption that it is valid. Values are
// returned as sub-slices of the body, raw: a string keeps its quotes and
// escapes until unquote decodes it.

// maxJSONDepth bounds the nesting validJSON accepts.
const maxJSONDepth = 128

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipSpace returns the index of the first non-space byte at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// trimSpace trims JSON whitespace on both sides.
func trimSpace(b []byte) []byte {
	i := skipSpace(b, 0)
	j := len(b)
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// ValidJSON reports whether b is exactly one JSON value (RFC 8259, its
// strings valid UTF-8), with whitespace around it, nested at most 128
// deep. It is the check the server kind makes of every body it reads,
// for the other MCP kinds to make of text they pass on; it does not
// allocate.
func ValidJSON(b []byte) bool { return validJSON(b) }

// validJSON reports whether b is exactly one JSON value, with whitespace
// around it, nested at most maxJSONDepth deep.
func validJSON(b []byte) bool { return scanJSON(b, nil) }

// topMembers are the members of a top-level object as scanJSON found them,
// in order: a request body's jsonrpc, id, method and params without a
// second walk of the body (nextMember) once it is known to be valid.
type topMembers struct {
	m [maxTopMembers]member
	n int
	// over is set when the object had more members than m holds: the
	// caller walks it with nextMember instead.
	over bool
}

// maxTopMembers is how many top-level members scanJSON records: a
// JSON-RPC message has at most five that matter.
const maxTopMembers = 8

// scanJSON is validJSON that also records in top, when it is not nil and
// b is an object, the object's members (key with its quotes, raw value).
// Only b's validity decides the result; top is complete only when it is
// true.
func scanJSON(b []byte, top *topMembers) bool {
	var stack [maxJSONDepth]byte // '{' or '['
	depth := 0
	// The top-level member being read: its key, and where its value
	// starts. A value at depth 1 of an object ends where the scan next
	// finds a value complete at depth 1 (done).
	var key []byte
	valueAt := 0
	done := func(end int) {
		if top.n == len(top.m) {
			top.over = true
			return
		}
		top.m[top.n] = member{key: key, value: b[valueAt:end]}
		top.n++
	}
	i := skipSpace(b, 0)
	// members: the top level is an object whose members go to top.
	members := top != nil && i < len(b) && b[i] == '{'
	if top != nil {
		top.n, top.over = 0, false
	}
	// expectValue: a value must come next; after a value, either the end,
	// a comma or a closing bracket.
	for {
		if i >= len(b) {
			return false
		}
		switch c := b[i]; c {
		case '{', '[':
			if depth == maxJSONDepth {
				return false
			}
			stack[depth] = c
			depth++
			i = skipSpace(b, i+1)
			if i < len(b) && (c == '{' && b[i] == '}' || c == '[' && b[i] == ']') {
				depth--
				i++
				if depth == 1 && members {
					done(i)
				}
				goto afterValue
			}
			if c == '{' {
				k, ke := i, 0
				if ke, i = objectKey(b, i); i < 0 {
					return false
				}
				if depth == 1 && members {
					key, valueAt = b[k:ke], i
				}
			}
			continue
		case '"':
			if i = stringEnd(b, i); i < 0 {
				return false
			}
		case 't':
			if !hasLiteral(b, i, "true") {
				return false
			}
			i += 4
		case 'f':
			if !hasLiteral(b, i, "false") {
				return false
			}
			i += 5
		case 'n':
			if !hasLiteral(b, i, "null") {
				return false
			}
			i += 4
		default:
			if i = numberEnd(b, i); i < 0 {
				return false
			}
		}
		if depth == 1 && members {
			done(i)
		}
	afterValue:
		i = skipSpace(b, i)
		for {
			if depth == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			open := stack[depth-1]
			switch b[i] {
			case ',':
				i = skipSpace(b, i+1)
				if open == '{' {
					k, ke := i, 0
					if ke, i = objectKey(b, i); i < 0 {
						return false
					}
					if depth == 1 && members {
						key, valueAt = b[k:ke], i
					}
				}
			case '}':
				if open != '{' {
					return false
				}
				depth--
				if depth == 1 && members {
					done(i + 1)
				}
				i = skipSpace(b, i+1)
				continue
			case ']':
				if open != '[' {
					return false
				}
				depth--
				if depth == 1 && members {
					done(i + 1)
				}
				i = skipSpace(b, i+1)
				continue
			default:
				return false
			}
			break
		}
	}
}

// objectKey checks a member's key and colon at b[i] and returns the end
// of the key (past its closing quote) and the index of its value; value is
// -1 when they are not there.
func objectKey(b []byte, i int) (keyEnd, value int) {
	if i >= len(b) || b[i] != '"' {
		return 0, -1
	}
	if keyEnd = stringEnd(b, i); keyEnd < 0 {
		return 0, -1
	}
	i = skipSpace(b, keyEnd)
	if i >= len(b) || b[i] != ':' {
		return 0, -1
	}
	return keyEnd, skipSpace(b, i+1)
}

func hasLiteral(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// stringEnd returns the index after the string that starts at b[i] (a
// quote), or -1 when it is malformed: unterminated, with a control
// character, a bad escape or invalid UTF-8.
func stringEnd(b []byte, i int) int {
	i++
	for i < len(b) {
		// Skip a run of plain bytes (printable ASCII other than the quote
		// and the backslash) eight at a time: most of a request body is
		// such runs, and a byte at a time cost most of a tools/call's
		// JSON walk.
		for len(b)-i >= 8 {
			m := specialBytes(binary.LittleEndian.Uint64(b[i:]))
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		if b[i] == '"' { // the usual special byte, without a call
			return i + 1
		}
		var closed bool
		if i, closed = stringStep(b, i); i < 0 || closed {
			return i
		}
	}
	return -1
}

// stringStep reads the string byte at b[i] (an escape or a UTF-8 sequence
// whole) and returns where the next one is, with closed set when b[i] was
// the closing quote; -1 for a malformed one.
func stringStep(b []byte, i int) (next int, closed bool) {
	c := b[i]
	switch {
	case c == '"':
		return i + 1, true
	case c == '\\':
		if i+1 >= len(b) {
			return -1, false
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			return i + 2, false
		case 'u':
			if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
				return -1, false
			}
			return i + 6, false
		}
		return -1, false
	case c < 0x20:
		return -1, false
	case c < utf8.RuneSelf:
		return i + 1, false
	}
	r, n := utf8.DecodeRune(b[i:])
	if r == utf8.RuneError && n <= 1 {
		return -1, false
	}
	return i + n, false
}

// specialBytes marks, with its high bit, each byte of x (eight bytes of a
// JSON string, little-endian) that stringEnd must look at: a quote, a
// backslash, a control character or a non-ASCII byte. A mark may also fall
// on a byte after a marked one (a borrow carries into it), never before:
// the lowest mark is always exact.
func specialBytes(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v }
	return (zero(x^('"'*ones)) | zero(x^('\\'*ones)) | (x-0x20*ones) & ^x | x) & highs
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// numberEnd returns the index after the number at b[i], or -1.
func numberEnd(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case isDigit(b[i]):
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i
}

// valueEnd returns the index after the value starting at b[i], in JSON
// that is valid as far as it goes, or -1 when b ends before the value
// does (a body that streams, held in part).
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = stringEnd(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return -1 // a number or literal may go on
}

// member is an object member: its raw key (quotes included) and value.
type member struct {
	key, value []byte
}

// nextMember returns the member of object obj at or after index i (0 for
// the first), and the index to pass for the next; ok is false past the
// last member, or at one obj holds only in part. obj must be valid JSON as
// far as it goes.
func nextMember(obj []byte, i int) (m member, next int, ok bool) {
	if i == 0 {
		i = skipSpace(obj, 0) + 1 // past '{'
	}
	i = skipSpace(obj, i)
	if i < len(obj) && obj[i] == ',' {
		i = skipSpace(obj, i+1)
	}
	if i >= len(obj) || obj[i] != '"' {
		return member{}, i, false
	}
	k := stringEnd(obj, i)
	if k < 0 {
		return member{}, i, false
	}
	m.key = obj[i:k]
	v := skipSpace(obj, k)
	if v >= len(obj) || obj[v] != ':' {
		return member{}, i, false
	}
	v = skipSpace(obj, v+1)
	e := valueEnd(obj, v)
	if e < 0 {
		return member{}, i, false
	}
	m.value = obj[v:e]
	return m, e, true
}

// field returns the value of obj's member named name (an unescaped key).
// A key written with escapes matches when it decodes to name. Of an
// object held in part, only the members complete in obj are seen.
func field(obj []byte, name string) ([]byte, bool) {
	if len(obj) == 0 || obj[0] != '{' {
		return nil, false
	}
	for m, i, ok := nextMember(obj, 0); ok; m, i, ok = nextMember(obj, i) {
		if keyIs(m.key, name) {
			return m.value, true
		}
	}
	return nil, false
}

// keyIs reports whether the raw string key decodes to name.
func keyIs(key []byte, name string) bool {
	raw := key[1 : len(key)-1]
	if len(raw) == len(name) && string(raw) == name {
		return true
	}
	for _, c := range raw {
		if c == '\\' {
			var buf [256]byte
			s, ok := unquote(buf[:0], key)
			return ok && string(s) == name
		}
	}
	return false
}

func isString(v []byte) bool { return len(v) > 0 && v[0] == '"' }
func isObject(v []byte) bool { return len(v) > 0 && v[0] == '{' }

// unquote appends the decoded text of the valid JSON string raw to dst.
// ok is false when the decoded text would not fit dst's capacity, so a
// fixed-size dst never grows.
func unquote(dst, raw []byte) ([]byte, bool) {
	raw = raw[1 : len(raw)-1]
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			if len(dst) == cap(dst) {
				return dst, false
			}
			dst = append(dst, c)
			i++
			continue
		}
		var r rune
		switch raw[i+1] {
		case 'u':
			r = rune(hex4(raw[i+2:]))
			i += 6
			if 0xD800 <= r && r < 0xDC00 && i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				if lo := rune(hex4(raw[i+2:])); 0xDC00 <= lo && lo < 0xE000 {
					r = (r-0xD800)<<10 + (lo - 0xDC00) + 0x10000
					i += 6
				}
			}
			if 0xD800 <= r && r < 0xE000 {
				r = utf8.RuneError
			}
		default:
			r = rune(unescapeByte(raw[i+1]))
			i += 2
		}
		if cap(dst)-len(dst) < utf8.RuneLen(r) {
			return dst, false
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst, true
}

func unescapeByte(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c // '"', '\\', '/'
}

func hex4(b []byte) uint32 {
	var v uint32
	for _, c := range b[:4] {
		v <<= 4
		switch {
		case c <= '9':
			v |= uint32(c - '0')
		case c >= 'a':
			v |= uint32(c - 'a' + 10)
		default:
			v |= uint32(c - 'A' + 10)
		}
	}
	return v
}

// appendQuoted appends s as a JSON string.
func appendQuoted[T ~string | ~[]byte](dst []byte, s T) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			switch c {
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// isInteger reports whether the valid JSON number v is an integer.
func isInteger(v []byte) bool {
	for _, c := range v {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return len(v) > 0
}

// validID reports whether v is a JSON-RPC request id MCP allows: a string
// or an integer (MCP schema: RequestId = string | number; null is not).
func validID(v []byte) bool {
	if isString(v) {
		return true
	}
	return len(v) > 0 && (v[0] == '-' || isDigit(v[0])) && isInteger(v)
}

// decodeHeaderValue decodes a Mcp-Name style header value into dst: plain
// ASCII as is, or the RFC 2047-like =?base64?…?= form 2026-07-28 uses for
// values that are not plain ASCII. ok is false for a malformed encoding or
// one that does not fit dst.
func decodeHeaderValue(dst, v []byte) ([]byte, bool) {
	const pre, post = "=?base64?", "?="
	if len(v) >= len(pre)+len(post) && asciiEqualFold(v[:len(pre)], []byte(pre)) && string(v[len(v)-2:]) == post {
		enc := v[len(pre) : len(v)-len(post)]
		n := base64.StdEncoding.DecodedLen(len(enc))
		if n > cap(dst)-len(dst) {
			return dst, false
		}
		out := dst[len(dst) : len(dst)+n]
		m, err := base64.StdEncoding.Decode(out, enc)
		if err != nil {
			return dst, false
		}
		return dst[:len(dst)+m], true
	}
	if len(v) > cap(dst)-len(dst) {
		return dst, false
	}
	return append(dst, v...), true
}

func asciiEqualFold(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
