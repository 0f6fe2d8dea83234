package jsonrpc

import (
	"bytes"
	"math/bits"
)

// A Path names a place in a JSON value by its steps from the top: a
// member's key, or Elem for any element of an array. {"content", Elem,
// "uri"} is the "uri" member of each object in the top-level object's
// "content" array.
type Path []string

// Elem is the Path step that matches every element of an array; it never
// matches a key, not even the key "[]".
const Elem = "[]"

// Paths a PathScanner follows at most, and the depth and key length they
// may reach.
const (
	MaxPaths     = 16
	MaxPathDepth = 8
	maxPathKey   = 32
)

// A PathScanner follows one JSON value streamed in pieces, a byte at a
// time, and reports where each string found at one of its paths begins.
// A key is read with its escapes decoded ("ur\u0069" is uri), as a JSON
// parser reads it; a member named twice is found twice. It keeps a bit
// set of live paths per open container, so a value of any size costs the
// same few dozen bytes, and within a string's plain run it only looks for
// the quote or backslash that ends it. It does not validate: bytes that
// are not JSON leave it in some state and never fail it (Tracker is the
// validator).
//
// The zero value follows no path; Reset gives it its paths.
type PathScanner struct {
	paths []Path
	all   uint16 // a bit per path
	// ends[d] holds the paths d steps long, longer[d] those longer.
	ends, longer [MaxPathDepth + 1]uint16
	lex          uint8
	value        bool // in an object, the next string is a value, not a key
	inKey        bool // the string being read is a key
	hex          uint8
	cp           rune
	next         uint16 // in an object, the paths the member being read is on
	keyLen       uint8
	keyBuf       [maxPathKey]byte
	depth        int
	// live holds, per open container up to MaxPathDepth, the paths it is
	// on; arr marks the arrays among them.
	live [MaxPathDepth]uint16
	arr  uint8
}

const (
	lexValue  uint8 = iota // outside strings
	lexString              // in a string
	lexEscape              // after a backslash
	lexHex                 // in \uXXXX
)

// Reset readies s for a new value, following paths (at most MaxPaths;
// steps past MaxPathDepth are never reached). paths is not copied.
func (s *PathScanner) Reset(paths []Path) {
	*s = PathScanner{paths: paths[:min(len(paths), MaxPaths)]}
	for i, p := range s.paths {
		if len(p) > 0 {
			s.all |= 1 << i
		}
		for d := range s.ends {
			switch {
			case len(p) == d:
				s.ends[d] |= 1 << i
			case len(p) > d:
				s.longer[d] |= 1 << i
			}
		}
	}
}

// Scan reads p, the next bytes of the value, and appends to at the offset
// in p where each string at one of the paths begins (just past its
// opening quote).
func (s *PathScanner) Scan(p []byte, at []int) []int {
	quote := -1 // the next '"' at or after i, len(p) if none
	for i := 0; i < len(p); i++ {
		if s.lex == lexString && !s.inKey {
			if quote < i {
				quote = len(p)
				if j := bytes.IndexByte(p[i:], '"'); j >= 0 {
					quote = i + j
				}
			}
			if k := bytes.IndexByte(p[i:quote], '\\'); k >= 0 {
				i += k
			} else {
				i = quote
			}
			if i == len(p) {
				break
			}
		}
		c := p[i]
		switch s.lex {
		case lexString:
			switch c {
			case '\\':
				s.lex = lexEscape
			case '"':
				s.lex = lexValue
				if s.inKey {
					s.next = s.keyPaths()
				}
			default:
				s.keyByte(c)
			}
		case lexEscape:
			s.lex = lexString
			switch c {
			case 'u':
				s.lex, s.hex, s.cp = lexHex, 4, 0
			case 'b':
				s.keyByte('\b')
			case 'f':
				s.keyByte('\f')
			case 'n':
				s.keyByte('\n')
			case 'r':
				s.keyByte('\r')
			case 't':
				s.keyByte('\t')
			default:
				s.keyByte(c)
			}
		case lexHex:
			if v, ok := unhexDigit(c); ok {
				s.cp = s.cp<<4 | rune(v)
			}
			if s.hex--; s.hex == 0 {
				s.lex = lexString
				if s.cp < 0x80 {
					s.keyByte(byte(s.cp))
				} else {
					s.keyByte(0xff) // in no key a Path names
				}
			}
		default:
			at = s.structural(c, i, at)
		}
	}
	return at
}

// structural reads c, a byte outside strings, at offset i of the piece.
func (s *PathScanner) structural(c byte, i int, at []int) []int {
	switch c {
	case '{', '[':
		on := s.valuePaths() & s.longer[min(s.depth, MaxPathDepth)]
		s.depth++
		if d := s.depth; d <= MaxPathDepth {
			s.live[d-1] = on
			if c == '[' {
				s.arr |= 1 << (d - 1)
			} else {
				s.arr &^= 1 << (d - 1)
			}
		}
		s.value, s.next = c == '[', 0
	case '}', ']':
		if s.depth > 0 {
			s.depth--
		}
		s.value, s.next = true, 0 // after a value
	case ',':
		s.value, s.next = !s.inObject(), 0
	case ':':
		s.value = true
	case '"':
		s.lex, s.keyLen = lexString, 0
		s.inKey = s.inObject() && !s.value
		if !s.inKey {
			if s.depth <= MaxPathDepth && s.valuePaths()&s.ends[s.depth] != 0 {
				at = append(at, i+1)
			}
			s.next = 0
		}
	}
	return at
}

// valuePaths is the set of paths the value starting now is on: those of
// the member whose key was read, or, in an array, those with Elem next.
func (s *PathScanner) valuePaths() uint16 {
	d := s.depth
	switch {
	case d == 0:
		return s.all
	case d > MaxPathDepth:
		return 0
	case s.arr&(1<<(d-1)) != 0:
		return s.step(s.live[d-1], d-1, Elem, true)
	}
	return s.next
}

// step keeps of live the paths whose step i is key (an array's element
// when elem).
func (s *PathScanner) step(live uint16, i int, key string, elem bool) uint16 {
	var on uint16
	for m := live; m != 0; m &= m - 1 {
		n := bits.TrailingZeros16(m)
		p := s.paths[n]
		if len(p) > i && (p[i] == Elem) == elem && p[i] == key {
			on |= 1 << n
		}
	}
	return on
}

// inObject reports whether the innermost open container is an object;
// deeper than MaxPathDepth it reads all as arrays, whose members no key
// names.
func (s *PathScanner) inObject() bool {
	d := s.depth
	return d > 0 && d <= MaxPathDepth && s.arr&(1<<(d-1)) == 0
}

func (s *PathScanner) keyByte(c byte) {
	if !s.inKey {
		return
	}
	if int(s.keyLen) < len(s.keyBuf) {
		s.keyBuf[s.keyLen] = c
	}
	if s.keyLen < 255 {
		s.keyLen++
	}
}

// keyPaths is the set of paths the member whose key was just read is on.
func (s *PathScanner) keyPaths() uint16 {
	d := s.depth
	if d == 0 || d > MaxPathDepth || int(s.keyLen) > len(s.keyBuf) {
		return 0
	}
	return s.step(s.live[d-1], d-1, string(s.keyBuf[:s.keyLen]), false)
}

// unhexDigit is the value of the hexadecimal digit c.
func unhexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
