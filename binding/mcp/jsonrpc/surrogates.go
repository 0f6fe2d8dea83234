package jsonrpc

import (
	"bytes"
	"unicode/utf16"
)

// ReplaceLoneSurrogates rewrites, in place, each \uXXXX escape in the JSON
// text b that names a lone UTF-16 surrogate (one not part of a high-low
// pair) as \ufffd, and returns how many it rewrote. The text keeps its
// length, and encoding/json reads it as it read b: it too decodes a lone
// surrogate as U+FFFD. A reader that keeps lone surrogates (JavaScript's
// JSON.parse) would read b otherwise, so a gateway that forwards b after
// reading it the encoding/json way rewrites it first, and every reader
// then sees the text it saw. b should be valid JSON (see [Valid]), or the
// start of some.
func ReplaceLoneSurrogates(b []byte) int {
	_, n := ReplaceLoneSurrogatesPart(b, true)
	return n
}

// ReplaceLoneSurrogatesPart is [ReplaceLoneSurrogates] for text that
// arrives in parts: b is the text from where the last call left off,
// with whatever arrived since, and final says no more follows. It
// returns done, the length of b's head that is final (an escape that b
// cuts, or a high surrogate whose pair may follow, starts there, at most
// eleven bytes from b's end), and how many escapes it rewrote. The next
// call takes the text from b[done]; the first, the text from a point
// outside any escape, such as a value's start.
func ReplaceLoneSurrogatesPart(b []byte, final bool) (done, n int) {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return len(b), n
		}
		j += i
		switch {
		case j+1 >= len(b):
			if final {
				return len(b), n
			}
			return j, n
		case b[j+1] != 'u':
			i = j + 2 // \" \\ \/ \b \f \n \r \t: the escaped byte is not a backslash
			continue
		case j+6 > len(b):
			if final {
				return len(b), n
			}
			return j, n
		}
		i = j + 6
		r := getu4(b[j:])
		if r < 0 || !utf16.IsSurrogate(r) {
			continue
		}
		if r < 0xdc00 {
			// A high surrogate: a pair when a low one's escape follows.
			lo := getu4(b[i:])
			if lo < 0 && !final && len(b)-i < 6 && (len(b) == i || b[i] == '\\') && (len(b)-i < 2 || b[i+1] == 'u') {
				return j, n // the next escape is cut: it may be the low half
			}
			if 0xdc00 <= lo && lo < 0xe000 {
				i += 6
				continue
			}
		}
		copy(b[j+2:j+6], "fffd")
		n++
	}
}
