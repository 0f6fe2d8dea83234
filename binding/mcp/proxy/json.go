package proxy

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
)

// The proxy reads JSON by spans: it finds a member's value, or an
// array's elements, as byte ranges of the text it has, and copies the
// rest through byte for byte. Every function is bounds-checked: a
// truncated or hostile text gives ok false, never a panic. Texts from a
// route are validated (mcp.ValidJSON) before they are walked.

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string token at b[i] == '"'.
// It looks at eight bytes at a time for the next quote or backslash: a
// list's descriptions and schemas are mostly strings, and a byte at a
// time was most of a merged tools/list's cost.
func skipString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for i++; i < len(b); {
		for len(b)-i >= 8 {
			if m := quoteOrBackslash(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		switch b[i] {
		case '"':
			return i + 1, true
		case '\\':
			i += 2 // the escaped byte cannot end the string
		default:
			i++
		}
	}
	return 0, false
}

// quoteOrBackslash marks, with its high bit, each byte of x (eight bytes,
// little-endian) that is a quote or a backslash. A borrow may also mark a
// byte after a marked one, never before: the lowest mark is exact.
func quoteOrBackslash(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, bs := x^('"'*ones), x^('\\'*ones)
	return ((q-ones)&^q | (bs-ones)&^bs) & highs
}

// skipValue returns the index after the value that starts at b[i].
func skipValue(b []byte, i int) (int, bool) {
	i = skipWS(b, i)
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				j, ok := skipString(b, i)
				if !ok {
					return 0, false
				}
				i = j - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\r' && b[j] != '\t' {
			j++
		}
		return j, j > i
	}
}

// member finds key among the members of the object obj (leading
// whitespace allowed) and returns its value's span. Keys are compared as
// written, without unescaping.
func member(obj []byte, key string) (start, end int, ok bool) {
	var sp [1]span
	members(obj, []string{key}, sp[:])
	return sp[0].start, sp[0].end, sp[0].ok
}

// span is where a member's value is in an object's text; ok is false when
// the object has no such member.
type span struct {
	start, end int
	ok         bool
}

// members finds each of keys among the members of the object obj in one
// walk, setting spans[i] to the value of the first member named keys[i]
// (compared as written, without unescaping), and stops once it has them
// all. It reports whether it found them all or walked obj to its end; on
// malformed text it reports false, and the spans found before it stay
// set. len(spans) must be len(keys).
func members(obj []byte, keys []string, spans []span) bool {
	for i := range spans {
		spans[i] = span{}
	}
	found := 0
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipWS(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return true
	}
	for i < len(obj) {
		ks := i
		ke, ok := skipString(obj, i)
		if !ok {
			return false
		}
		i = skipWS(obj, ke)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		vs := skipWS(obj, i+1)
		ve, ok := skipValue(obj, vs)
		if !ok {
			return false
		}
		name := obj[ks+1 : ke-1]
		for k, key := range keys {
			if !spans[k].ok && string(name) == key {
				spans[k] = span{vs, ve, true}
				if found++; found == len(keys) {
					return true
				}
			}
		}
		i = skipWS(obj, ve)
		if i < len(obj) && obj[i] == '}' {
			return true
		}
		if i >= len(obj) || obj[i] != ',' {
			return false
		}
		i = skipWS(obj, i+1)
	}
	return false
}

// element returns the span of the array element at or after b[i] (i just
// after '[' or after the previous element), and the index to continue
// from; ok is false at the array's end or on malformed text.
func element(b []byte, i int) (start, end, next int, ok bool) {
	i = skipWS(b, i)
	if i < len(b) && b[i] == ',' {
		i = skipWS(b, i+1)
	}
	if i >= len(b) || b[i] == ']' {
		return 0, 0, 0, false
	}
	end, ok = skipValue(b, i)
	return i, end, end, ok
}

// stringValue returns the contents of the string token tok, unescaped
// when it has escapes (then into a new slice).
func stringValue(tok []byte) ([]byte, bool) {
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return nil, false
	}
	in := tok[1 : len(tok)-1]
	if bytes.IndexByte(in, '\\') < 0 {
		return in, true
	}
	var s string
	if json.Unmarshal(tok, &s) != nil {
		return nil, false
	}
	return []byte(s), true
}

// appendQuoted appends s as a JSON string.
func appendQuoted(dst []byte, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// scanner finds where a JSON object ends as its bytes arrive: it tracks
// the nesting of braces and brackets outside strings.
type scanner struct {
	depth   int
	started bool
	inStr   bool
	escape  bool
}

func (s *scanner) reset() { *s = scanner{} }

// feed scans p and returns the number of bytes up to and including the
// closing brace of the top-level value, or -1 when it has not closed.
func (s *scanner) feed(p []byte) int {
	for i, c := range p {
		if s.inStr {
			switch {
			case s.escape:
				s.escape = false
			case c == '\\':
				s.escape = true
			case c == '"':
				s.inStr = false
			}
			continue
		}
		switch c {
		case '"':
			s.inStr = true
		case '{', '[':
			s.depth++
			s.started = true
		case '}', ']':
			s.depth--
			if s.started && s.depth <= 0 {
				return i + 1
			}
		}
	}
	return -1
}
