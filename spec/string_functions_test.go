package spec_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/spec"
)

func TestStringMethods(t *testing.T) {
	props := map[string]any{"affinity": "00000000", "n": int64(7), "f": 1.5, "nothing": nil}
	tests := []struct {
		name string
		src  string
		want any
	}{
		{"concat property", `"5ca1ab1e-c0de-4a11-5e55-0001".concat(affinity)`, "5ca1ab1e-c0de-4a11-5e55-000100000000"},
		{"concat chained", `"a".concat("b").concat("c")`, "abc"},
		{"concat number", `"n=".concat(n)`, "n=7"},
		{"concat double", `"f=".concat(f)`, "f=1.5"},
		{"concat whole double", `"f=".concat(2.0)`, "f=2.0"},
		{"concat large double", `"f=".concat(1e10)`, "f=1.0E10"},
		{"concat null is empty", `"x".concat(nothing)`, "x"},
		{"concat boolean", `"b=".concat(true)`, "b=true"},
		{"formatted", `"uri=%s".formatted("a%20b")`, "uri=a%20b"},
		{"formatted several", `"%s-%d-%x-%05d-%%".formatted("a", 12, 255, 42)`, "a-12-ff-00042-%"},
		{"formatted index", `"%2$s %1$s".formatted("world", "hello")`, "hello world"},
		{"formatted width", `"[%-4s][%4s][%.2s]".formatted("ab", "cd", "xyz")`, "[ab  ][  cd][xy]"},
		{"formatted negative hex", `"%x".formatted(-1)`, "ffffffffffffffff"},
		{"formatted null", `"%s".formatted(nothing)`, "null"},
		{"length counts UTF-16 units", `"h\u00e9llo".length()`, int64(5)},
		{"isEmpty", `"".isEmpty()`, true},
		{"substring", `"hello".substring(1, 3)`, "el"},
		{"substring to end", `"hello".substring(2)`, "llo"},
		{"replace", `"a-b-c".replace("-", "+")`, "a+b+c"},
		{"upper", `"abc".toUpperCase()`, "ABC"},
		{"lower", `"ABC".toLowerCase()`, "abc"},
		{"trim", `"  x \t".trim()`, "x"},
		{"startsWith", `"hello".startsWith("he")`, true},
		{"endsWith", `"hello".endsWith("he")`, false},
		{"contains", `"hello".contains("ell")`, true},
		{"equals", `"a".equals("a")`, true},
		{"equals other type", `"7".equals(n)`, false},
		{"indexOf", `"hello".indexOf("l")`, int64(2)},
		{"indexOf absent", `"hello".indexOf("z")`, int64(-1)},
		{"repeat", `"ab".repeat(3)`, "ababab"},
		{"getBytes is UTF-8", `"h\u00e9".getBytes()`, []byte("h\xc3\xa9")},
		{"getBytes ASCII", `"h\u00e9".getBytes("US-ASCII")`, []byte("h?")},
		{"toString", `"x".toString()`, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := tt.src
			// The expression language has no \u escape; the tests write
			// non-ASCII text through Go.
			src = replaceUnicodeEscapes(src)
			e := &spec.Env{Properties: props}
			v, err := e.EvalString(src)
			require.NoError(t, err)
			assert.Equal(t, tt.want, v)
		})
	}
}

func replaceUnicodeEscapes(s string) string {
	out := []rune{}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		if rs[i] == '\\' && i+5 < len(rs) && rs[i+1] == 'u' {
			var r rune
			for _, c := range rs[i+2 : i+6] {
				r = r*16 + hexVal(c)
			}
			out = append(out, r)
			i += 5
			continue
		}
		out = append(out, rs[i])
	}
	return string(out)
}

func hexVal(c rune) rune {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func TestStringMethodErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unknown method", `"a".split(",")`, `1:5: unknown method .split on string "a" (methods: concat,`},
		{"arity", `"a".concat()`, `1:5: .concat takes 1 argument(s), got 0`},
		{"arity range", `"a".substring(1, 2, 3)`, `.substring takes 1 or 2 argument(s), got 3`},
		{"bytes are no string", `"a".concat(core:randomBytes(2))`, `1:12: .concat: argument 1 must be a string, got bytes`},
		{"not an integer", `"abc".substring("x")`, `1:17: .substring: argument 1 must be an integer, got string "x"`},
		{"out of bounds", `"abc".substring(2, 5)`, `.substring: range [2, 5) out of bounds for length 3`},
		{"format needs argument", `"%s %s".formatted("a")`, `.formatted: format "%s %s" needs argument 2, got 1`},
		{"format conversion", `"%d".formatted("a")`, `.formatted: %d needs an integer, got string "a"`},
		{"format specifier", `"%q".formatted("a")`, `.formatted: bad format specifier "%q" at offset 0`},
		{"charset", `"a".getBytes("EBCDIC")`, `.getBytes: unsupported charset "EBCDIC"`},
		{"negative repeat", `"a".repeat(-1)`, `.repeat: count is negative: -1`},
		{"method on a number", `(1).concat("a")`, `cannot call method .concat on integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := (&spec.Env{}).EvalString(tt.src)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
