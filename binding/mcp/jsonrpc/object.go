package jsonrpc

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// The functions here walk JSON held whole (or in part, up to where it is
// cut) in one buffer: the members of an object, the elements of an array,
// the end of a string. They look only at what they need to find those
// ends, so the text should be known valid (see [Valid] and
// [Tracker.Track]); on text that is not, they stop somewhere, report
// false or -1, and never panic. What they return aliases their input.

// SkipSpace returns the offset of the first byte of b at or after i that
// is not JSON whitespace, or len(b).
func SkipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// TrimSpace returns b without the JSON whitespace on either side.
func TrimSpace(b []byte) []byte {
	i, j := SkipSpace(b, 0), len(b)
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// StringEnd returns the offset just past the string that starts at b[i]:
// past its first quote that no backslash escapes. It is -1 when b[i] is
// not a quote or b ends first. It checks nothing else, so in text that is
// valid JSON (RFC 8259 §7) it finds the string's end, and in text that is
// not it still stops.
func StringEnd(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); {
		// Skip eight bytes at a time to the next quote or backslash: most
		// of a message is the contents of strings.
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
			return i + 1
		case '\\':
			i += 2 // the escaped byte cannot end the string
		default:
			i++
		}
	}
	return -1
}

// quoteOrBackslash marks, with its high bit, each byte of x (eight bytes,
// little-endian) that is a quote or a backslash. A borrow may also mark a
// byte after a marked one, never before: the lowest mark is exact.
func quoteOrBackslash(x uint64) uint64 {
	q, bs := x^('"'*ones), x^('\\'*ones)
	return ((q-ones)&^q | (bs-ones)&^bs) & highs
}

// valueEnd returns the offset just past the value that starts at b[i], or
// -1 when no value starts there or b ends before the value does: a number
// or literal at b's end may go on. Within objects and arrays it counts
// only the brackets outside strings.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return StringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = StringEnd(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			if j == i {
				return -1 // no value at all
			}
			return j
		}
	}
	return -1
}

// Field is one member of an object as it is written: Key is the key with
// its quotes and escapes, Value the raw value.
type Field struct {
	Key, Value []byte
}

// NextField returns the member of the object obj at or after offset i
// (0 for the first) and the offset to pass for the next one, which is
// where the member's value ends. ok is false past the last member, and at
// a member that obj holds only in part (a body cut where it streams), so
// that only complete members are seen. The field aliases obj.
func NextField(obj []byte, i int) (f Field, next int, ok bool) {
	if i == 0 {
		if i = SkipSpace(obj, 0); i >= len(obj) || obj[i] != '{' {
			return Field{}, i, false
		}
		i++
	}
	i = SkipSpace(obj, i)
	if i < len(obj) && obj[i] == ',' {
		i = SkipSpace(obj, i+1)
	}
	if i >= len(obj) || obj[i] != '"' {
		return Field{}, i, false
	}
	k := StringEnd(obj, i)
	if k < 0 {
		return Field{}, i, false
	}
	v := SkipSpace(obj, k)
	if v >= len(obj) || obj[v] != ':' {
		return Field{}, i, false
	}
	v = SkipSpace(obj, v+1)
	e := valueEnd(obj, v)
	if e < 0 {
		return Field{}, i, false
	}
	return Field{Key: obj[i:k:k], Value: obj[v:e:e]}, e, true
}

// NextElement returns the element of the array arr at or after offset i
// (0 for the first) and the offset to pass for the next one, which is
// where the element ends. ok is false past the last element, and at one
// that arr holds only in part. The element aliases arr.
func NextElement(arr []byte, i int) (v []byte, next int, ok bool) {
	if i == 0 {
		if i = SkipSpace(arr, 0); i >= len(arr) || arr[i] != '[' {
			return nil, i, false
		}
		i++
	}
	i = SkipSpace(arr, i)
	if i < len(arr) && arr[i] == ',' {
		i = SkipSpace(arr, i+1)
	}
	if i >= len(arr) || arr[i] == ']' {
		return nil, i, false
	}
	e := valueEnd(arr, i)
	if e < 0 {
		return nil, i, false
	}
	return arr[i:e:e], e, true
}

// Lookup returns the value of the first member of the object obj whose
// key decodes to name (see [KeyIs]), or nil when it has none: a value is
// never empty. Of an object held in part, only complete members are seen.
// The value aliases obj.
func Lookup(obj []byte, name string) []byte {
	for f, i, ok := NextField(obj, 0); ok; f, i, ok = NextField(obj, i) {
		if KeyIs(f.Key, name) {
			return f.Value
		}
	}
	return nil
}

// LookupUnique is Lookup that also reports, as twice, when obj names
// name more than once: parsers disagree on which of two members counts,
// so a caller whose reading a peer must share refuses such an object.
func LookupUnique(obj []byte, name string) (v []byte, twice bool) {
	for f, i, ok := NextField(obj, 0); ok; f, i, ok = NextField(obj, i) {
		if KeyIs(f.Key, name) {
			if v != nil {
				return v, true
			}
			v = f.Value
		}
	}
	return v, false
}

// NamesTwice reports whether the object obj gives two of its members one
// name, the names compared as they decode (as [KeyIs] compares them):
// parsers disagree on which of the two counts, so a caller whose reading
// a peer must share refuses the object. A key that does not decode
// counts as named twice.
func NamesTwice(obj []byte) bool {
	var names Names
	for f, i, ok := NextField(obj, 0); ok; f, i, ok = NextField(obj, i) {
		name, ok := KeyName(f.Key)
		if !ok || names.Add(name) {
			return true
		}
	}
	return false
}

// KeyName returns the name the raw key (a JSON string, quotes included,
// as [Field.Key] holds it) decodes to, as [KeyIs] reads it: the key's own
// bytes when it holds no escape and no non-ASCII byte. ok is false when it
// does not decode.
func KeyName(key []byte) (name []byte, ok bool) {
	if len(key) < 2 {
		return nil, false
	}
	for _, c := range key[1 : len(key)-1] {
		if c == '\\' || c >= utf8.RuneSelf {
			s, err := Unquote(nil, key)
			return s, err == nil
		}
	}
	return key[1 : len(key)-1], true
}

// Names holds the member names of one object as a walk of its members
// meets them, for [NamesTwice] and walks of their own. The zero value is
// empty; a Names is not reused across objects.
type Names struct {
	small [16][]byte
	n     int
	set   map[string]struct{} // past len(small) names
}

// Add adds a member's name, decoded as [KeyName] gives it, and reports
// whether it was added before.
func (s *Names) Add(name []byte) bool {
	if s.set == nil {
		for _, p := range s.small[:s.n] {
			if string(p) == string(name) {
				return true
			}
		}
		if s.n < len(s.small) {
			s.small[s.n] = name
			s.n++
			return false
		}
		// Past a few members, a set rather than a comparison with each.
		s.set = make(map[string]struct{}, 2*len(s.small))
		for _, p := range s.small {
			s.set[string(p)] = struct{}{}
		}
	}
	if _, dup := s.set[string(name)]; dup {
		return true
	}
	s.set[string(name)] = struct{}{}
	return false
}

// keyBuf is the room KeyIs decodes an escaped key in without allocating.
const keyBuf = 256

// KeyIs reports whether the raw key (a JSON string, quotes included, as
// [Field.Key] holds it) decodes to name as [Unquote] decodes it, so that
// "\u0069d" is "id". Only a key with an escape or a non-ASCII byte is
// decoded, into a buffer on the stack.
func KeyIs(key []byte, name string) bool {
	if len(key) < 2 {
		return false
	}
	raw := key[1 : len(key)-1]
	if string(raw) == name {
		return true
	}
	for _, c := range raw {
		if c == '\\' || c >= utf8.RuneSelf {
			if len(name) > keyBuf {
				s, err := Unquote(nil, key)
				return err == nil && string(s) == name
			}
			var buf [keyBuf]byte
			s, err := UnquoteTo(buf[:0], key)
			return err == nil && string(s) == name
		}
	}
	return false
}
