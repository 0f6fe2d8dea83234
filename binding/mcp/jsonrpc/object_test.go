package jsonrpc_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// stringEndOracle is StringEnd by encoding/json: the end of the shortest
// prefix of b[i:] that is a valid JSON string, or -1. Only a quote can end
// one, so only those are tried.
func stringEndOracle(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for k := i + 1; k < len(b); k++ {
		if b[k] == '"' && json.Valid(b[i:k+1]) {
			return k + 1
		}
	}
	return -1
}

// stringEndBytewise is StringEnd a byte at a time, without its word scan:
// past the first quote no backslash escapes.
func stringEndBytewise(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// checkStringEnd holds StringEnd(b, i) to the bytewise scan, and where b
// holds a valid string at i, to encoding/json.
func checkStringEnd(t testing.TB, b []byte, i int) {
	t.Helper()
	got := jsonrpc.StringEnd(b, i)
	if want := stringEndBytewise(b, i); got != want {
		t.Fatalf("StringEnd(%q, %d) = %d, bytewise %d", b, i, got, want)
	}
	if want := stringEndOracle(b, i); want >= 0 && got != want {
		t.Fatalf("StringEnd(%q, %d) = %d, encoding/json %d", b, i, got, want)
	}
}

func TestStringEnd(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"plain", `"plain" rest`, 7},
		{"escaped quote", `"a\"b" rest`, 6},
		{"escaped backslash", `"a\\" rest`, 5},
		{"escapes in a row", `"\\\\\"" rest`, 8},
		{"escape between long runs", `"` + strings.Repeat("x", 100) + `\n` + strings.Repeat("y", 100) + `"`, 204},
		{"unicode escape of a quote", `"\u0022"`, 8},
		{"invalid UTF-8", "\"a\xffb\"", 5},
		{"unterminated", `"unterminated`, -1},
		{"escaped end", `"escaped end\"`, -1},
		{"backslash last", `"backslash last\`, -1},
		{"not a string", `x"`, -1},
		{"empty input", ``, -1},
		// Not valid JSON, yet the end is found.
		{"control byte", "\"a\x01b\"", 5},
		{"unknown escape", `"\x"`, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, jsonrpc.StringEnd([]byte(tt.in), 0))
			checkStringEnd(t, []byte(tt.in), 0)
		})
	}
}

// TestStringEndWords puts each byte StringEnd must stop at (the closing
// quote, an escape) and bytes it must not (control and non-ASCII bytes,
// DEL, punctuation) at every offset of a plain run, on both sides of an
// eight-byte word, and after bytes that carry a borrow in the word scan.
func TestStringEndWords(t *testing.T) {
	specials := []string{`"`, `\"`, `\\`, `\u00e9`, `\x`, "\x00", "\x1f", "\x7f", " ", "é", "\xff", "\xe2\x82", `!`, `#`, `[`, `]`, "~", "\x21", "\x5b", "\x5d"}
	for _, sp := range specials {
		for pre := 0; pre < 20; pre++ {
			for _, tail := range []string{``, `"`, `abc"`, "\x01\"", `\`} {
				for _, s := range []string{
					`"` + strings.Repeat("a", pre) + sp + tail,
					`"` + strings.Repeat(" ", pre) + sp + sp + strings.Repeat("z", 9) + tail,
				} {
					checkStringEnd(t, []byte(s), 0)
				}
			}
		}
	}
}

func TestTrimSpace(t *testing.T) {
	assert.Equal(t, `{"a" : 1 }`, string(jsonrpc.TrimSpace([]byte(" \t\r\n{\"a\" : 1 }\n "))))
	assert.Empty(t, jsonrpc.TrimSpace([]byte(" \t\r\n")))
	assert.Equal(t, "\v1\f", string(jsonrpc.TrimSpace([]byte(" \v1\f "))), "only JSON's whitespace")
	assert.Equal(t, 3, jsonrpc.SkipSpace([]byte("  \t"), 1))
}

// fields lists the members NextField walks in obj, as key=value.
func fields(obj string) []string {
	var out []string
	b := []byte(obj)
	for f, i, ok := jsonrpc.NextField(b, 0); ok; f, i, ok = jsonrpc.NextField(b, i) {
		if string(b[i-len(f.Value):i]) != string(f.Value) {
			panic("next is not where the value ends")
		}
		out = append(out, string(f.Key)+"="+string(f.Value))
	}
	return out
}

func TestNextField(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"compact", `{"a":1,"b":"x"}`, []string{`"a"=1`, `"b"="x"`}},
		{"spaced", ` { "a" : [1,{"b":"}"}] , "name":"x\"y", "n": -1.5e3 ,"o":{}} `,
			[]string{`"a"=[1,{"b":"}"}]`, `"name"="x\"y"`, `"n"=-1.5e3`, `"o"={}`}},
		{"keys as written", `{"d\u0065":true,"":null}`, []string{`"d\u0065"=true`, `""=null`}},
		{"empty", `{}`, nil},
		{"not an object", `[1]`, nil},
		{"held in part", `{"name":"echo","arguments":{"message":"abc`, []string{`"name"="echo"`}},
		{"a number at the end may go on", `{"a":"x","n":12`, []string{`"a"="x"`}},
		{"a literal at the end may go on", `{"t":tru`, nil},
		{"a key without its value", `{"a"`, nil},
		{"a member without a value", `{"a":,"b":1}`, nil},
		{"not checked beyond the ends", "{\"a\":1,\"b\":\"\x01\"}", []string{`"a"=1`, "\"b\"=\"\x01\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, fields(tt.in))
		})
	}
}

func TestNextElement(t *testing.T) {
	walk := func(arr string) []string {
		var out []string
		b := []byte(arr)
		for v, i, ok := jsonrpc.NextElement(b, 0); ok; v, i, ok = jsonrpc.NextElement(b, i) {
			out = append(out, string(v))
		}
		return out
	}
	assert.Equal(t, []string{`1`, `"]"`, `{"a":[2]}`, `[]`, `null`}, walk(` [ 1 ,"]", {"a":[2]},[],null ] `))
	assert.Nil(t, walk(`[]`))
	assert.Nil(t, walk(`{"a":1}`), "not an array")
	assert.Equal(t, []string{`{"a":1}`}, walk(`[{"a":1},{"b":`), "held in part")
	assert.Equal(t, []string{`2`}, walk(`[1,2]`)[1:], "from the offset after the first")
	assert.Equal(t, []string{`1`}, walk(`[1,}`), "a missing element ends the walk")
	assert.Equal(t, []string{`"a"`, `:1`}, walk(`["a":1]`), "not checked beyond the ends")
}

func TestLookup(t *testing.T) {
	obj := []byte(`{ "a" : 1 , "b":{"c":[1,"}"]}, "d\u0065":"x", "e":"\"q\"", "a": 2, "progressToken": 12 ,"total":3.5}`)
	tests := []struct {
		name, want string
	}{
		{"a", `1`}, // the first of two
		{"b", `{"c":[1,"}"]}`},
		{"de", `"x"`}, // an escaped key matches its decoded name
		{"e", `"\"q\""`},
		{"progressToken", `12`},
		{"total", `3.5`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, string(jsonrpc.Lookup(obj, tt.name)), tt.name)
	}
	assert.Nil(t, jsonrpc.Lookup(obj, "z"))
	assert.Nil(t, jsonrpc.Lookup(obj, "c"), "a nested member is not the object's")
	assert.Nil(t, jsonrpc.Lookup([]byte(`[1]`), "a"))
	assert.Nil(t, jsonrpc.Lookup([]byte(`{"a"`), "a"))
	assert.Nil(t, jsonrpc.Lookup([]byte(`{"n":12`), "n"), "a number at the end may go on")
}

func TestNamesTwice(t *testing.T) {
	many := `{`
	for i := range 40 {
		many += fmt.Sprintf(`"k%d":%d,`, i, i)
	}
	for obj, want := range map[string]bool{
		`{}`:                               false,
		`{"a":1,"b":{"a":2}}`:              false,
		`{"a":1,"b":2,"a":3}`:              true,
		`{"a":1,"\u0061":2}`:               true,
		`{"ab":1,"a\u0062":2}`:             true,
		`{"a\/b":1,"a/b":2}`:               true,
		many + `"k40":40}`:                 false,
		many + `"k3":40}`:                  true,
		many + `"k\u0033\u0039":40}`:       true,
		`{"a":[{"a":1},{"a":2}],"b":null}`: false,
	} {
		assert.Equal(t, want, jsonrpc.NamesTwice([]byte(obj)), obj)
	}
}

func TestKeyName(t *testing.T) {
	for key, want := range map[string]string{`"id"`: "id", `"\u0069d"`: "id", `"a\/b"`: "a/b", `"é"`: "é", `""`: ""} {
		name, ok := jsonrpc.KeyName([]byte(key))
		assert.True(t, ok, key)
		assert.Equal(t, want, string(name), key)
	}
	for _, key := range []string{`"\x"`, `"`, ``} {
		_, ok := jsonrpc.KeyName([]byte(key))
		assert.False(t, ok, key)
	}
}

// FuzzNamesTwice checks NamesTwice against encoding/json's reading of an
// object's member names.
func FuzzNamesTwice(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":2}`, `{"a":1,"a":2}`, `{"\u0061":1,"a":{}}`, `{"é":1,"\u00e9":2}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, obj []byte) {
		if !json.Valid(obj) || !utf8.Valid(obj) {
			return
		}
		assert.Equal(t, enginetest.NamedTwice(obj) != nil, jsonrpc.NamesTwice(obj), "%q", obj)
	})
}

func TestLookupUnique(t *testing.T) {
	obj := []byte(`{"a":1,"b":2,"\u0061":3,"c":{"b":4}}`)
	v, twice := jsonrpc.LookupUnique(obj, "a")
	assert.Equal(t, `1`, string(v))
	assert.True(t, twice, "keys compared as they decode")
	v, twice = jsonrpc.LookupUnique(obj, "b")
	assert.Equal(t, `2`, string(v))
	assert.False(t, twice, "a nested member is not the object's")
	v, twice = jsonrpc.LookupUnique(obj, "z")
	assert.Nil(t, v)
	assert.False(t, twice)
}

func TestKeyIs(t *testing.T) {
	long := strings.Repeat("k", 300)
	tests := []struct {
		key, name string
		want      bool
	}{
		{`"id"`, "id", true},
		{`"\u0069d"`, "id", true},
		{`"i\d"`, "id", false}, // an invalid escape decodes to nothing
		{`"ids"`, "id", false},
		{`"\u0069ds"`, "id", false},
		{`""`, "", true},
		{`"\ud800"`, "\ufffd", true},
		{"\"\xff\"", "\ufffd", true},
		{`"` + long + `"`, long, true},
		{`"\u006b` + long[1:] + `"`, long, true},
		{`"\u006b` + long + `"`, long, false},
		{`x`, "", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, jsonrpc.KeyIs([]byte(tt.key), tt.name), "%.20s %.20s", tt.key, tt.name)
	}
}

// TestObjectAllocs: the walks allocate nothing.
func TestObjectAllocs(t *testing.T) {
	msg := []byte(toolsCall)
	params := jsonrpc.Lookup(msg, "params")
	key, arr := []byte(`"\u005fmeta"`), []byte(`[1,"2"]`)
	allocs := testing.AllocsPerRun(100, func() {
		if jsonrpc.Lookup(params, "_meta") == nil || !jsonrpc.KeyIs(key, "_meta") {
			t.Fatal("no _meta")
		}
		for _, i, ok := jsonrpc.NextElement(arr, 0); ok; _, i, ok = jsonrpc.NextElement(arr, i) {
		}
	})
	assert.Zero(t, allocs)
}
