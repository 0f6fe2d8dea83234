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
// then sees the text it saw. b should be valid JSON (see [Valid]);
// escapes are recognised as [StringEnd] recognises them.
func ReplaceLoneSurrogates(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		j := bytes.Index(b[i:], []byte(`\u`))
		if j < 0 {
			break
		}
		j += i
		i = j + 2
		// The backslash starts an escape when the run of backslashes
		// before it is even: an odd one escapes it.
		k := j
		for k > 0 && b[k-1] == '\\' {
			k--
		}
		if (j-k)%2 != 0 {
			continue
		}
		r := getu4(b[j:])
		if r < 0 {
			continue
		}
		i = j + 6
		if !utf16.IsSurrogate(r) {
			continue
		}
		if r < 0xdc00 {
			if lo := getu4(b[j+6:]); 0xdc00 <= lo && lo < 0xe000 {
				i = j + 12 // a pair
				continue
			}
		}
		copy(b[j+2:j+6], "fffd")
		n++
	}
	return n
}
