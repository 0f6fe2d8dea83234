package server

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpb "github.com/sluicehq/sluice/binding/http"
)

func TestValidJSON(t *testing.T) {
	for _, s := range []string{
		`{}`, ` [ ] `, `"x"`, `0`, `-0.5e+10`, `true`, `null`, `{"a":[1,{"b":"\u00e9\n"}],"c":false}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, "\t{\"a\" : 1 }\r\n",
	} {
		assert.True(t, validJSON([]byte(s)), s)
	}
	for _, s := range []string{
		``, ` `, `{`, `{bad`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `01`, `1.`, `.5`, `-`, `1e`, `"\x"`, "\"\x01\"",
		`tru`, `nulls`, `{} {}`, `[}`, `{]`, `"` + "\xff" + `"`, `{"a":1}}`, strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1),
	} {
		assert.False(t, validJSON([]byte(s)), s)
	}
}

// FuzzValidJSON checks validJSON against encoding/json on UTF-8 input
// nested no deeper than validJSON allows.
func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `[`, `"\ud800"`, `1e5`, `{"x":"y"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !utf8.Valid(b) || strings.Count(string(b), "[")+strings.Count(string(b), "{") > maxJSONDepth {
			return
		}
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid = %v", b, got, want)
		}
	})
}

func TestField(t *testing.T) {
	obj := []byte(`{ "a" : 1 , "b":{"c":[1,"}"]}, "d\u0065":"x", "e":"\"q\""}`)
	v, ok := field(obj, "b")
	require.True(t, ok)
	assert.Equal(t, `{"c":[1,"}"]}`, string(v))
	v, ok = field(obj, "de")
	require.True(t, ok, "an escaped key matches its decoded name")
	assert.Equal(t, `"x"`, string(v))
	_, ok = field(obj, "z")
	assert.False(t, ok)

	// Of an object held in part, only complete members.
	part := []byte(`{"name":"echo","arguments":{"message":"abc`)
	v, ok = field(part, "name")
	require.True(t, ok)
	assert.Equal(t, `"echo"`, string(v))
	_, ok = field(part, "arguments")
	assert.False(t, ok)
	_, ok = field([]byte(`{"n":12`), "n")
	assert.False(t, ok, "a number at the end may go on")
}

func TestUnquote(t *testing.T) {
	var buf [64]byte
	s, ok := unquote(buf[:0], []byte(`"a\"b\\c\/d\n\u00e9\ud83d\ude00"`))
	require.True(t, ok)
	assert.Equal(t, "a\"b\\c/d\né😀", string(s))
	_, ok = unquote(buf[:0:2], []byte(`"abc"`))
	assert.False(t, ok, "does not grow past the capacity")
	s, ok = unquote(buf[:0], []byte(`"\ud800x"`))
	require.True(t, ok)
	assert.Equal(t, "\uFFFDx", string(s), "a lone surrogate")
}

func TestAppendQuoted(t *testing.T) {
	for _, s := range []string{"plain", "q\"b\\", "nl\n\t\r\x01", "é😀"} {
		b := appendQuoted(nil, s)
		var back string
		require.NoError(t, json.Unmarshal(b, &back), string(b))
		assert.Equal(t, s, back)
	}
}

func TestDecodeHeaderValue(t *testing.T) {
	var buf [32]byte
	v, ok := decodeHeaderValue(buf[:0], []byte("echo"))
	require.True(t, ok)
	assert.Equal(t, "echo", string(v))
	v, ok = decodeHeaderValue(buf[:0], []byte("=?base64?w6ljaG8=?="))
	require.True(t, ok)
	assert.Equal(t, "écho", string(v))
	_, ok = decodeHeaderValue(buf[:0], []byte("=?base64?!!?="))
	assert.False(t, ok)
	_, ok = decodeHeaderValue(buf[:0:3], []byte("echo"))
	assert.False(t, ok)
}

func TestValidID(t *testing.T) {
	for _, s := range []string{`1`, `-7`, `"x"`, `""`} {
		assert.True(t, validID([]byte(s)), s)
	}
	for _, s := range []string{`null`, `1.5`, `1e3`, `{}`, `[]`, `true`} {
		assert.False(t, validID([]byte(s)), s)
	}
}

func TestEventID(t *testing.T) {
	b := appendEventID(nil, 3, 42)
	assert.Equal(t, "3-42", string(b))
	stream, seq, ok := parseEventID(b)
	require.True(t, ok)
	assert.Equal(t, [2]uint32{3, 42}, [2]uint32{stream, seq})
	for _, s := range []string{"", "-1", "1-", "a-1", "1-2-3", "99999999999-1"} {
		_, _, ok := parseEventID([]byte(s))
		assert.False(t, ok, s)
	}
}

// TestHeaderIter reads what the generated builder writes.
func TestHeaderIter(t *testing.T) {
	var b httpb.HttpBeginExBuilder
	buf := make([]byte, 512)
	eb := b.Wrap(buf, 0, len(buf)).TypeID(7)
	hs := eb.Headers()
	hs.Item().Name(":method").Value("POST")
	hs.Item().Name("empty").Value("")
	hs.Item().Name("accept").Value("text/event-stream")
	n, err := eb.BuildLimit()
	require.NoError(t, err)
	it, ok := httpHeaders(buf[:n], 7)
	require.True(t, ok)
	var got []string
	for name, v, ok := it.next(); ok; name, v, ok = it.next() {
		got = append(got, string(name)+"="+string(v))
	}
	assert.Equal(t, []string{":method=POST", "empty=", "accept=text/event-stream"}, got)
	_, ok = httpHeaders(buf[:n], 8)
	assert.False(t, ok, "another type id")
	for cut := 0; cut < n; cut++ { // truncations never panic
		if it, ok := httpHeaders(buf[:cut], 7); ok {
			for _, _, ok := it.next(); ok; _, _, ok = it.next() {
			}
		}
	}
}

func TestSplice2026(t *testing.T) {
	h := &server{aux: make([]byte, 0, 1024), serverInfo: []byte(`{"name":"sluice","version":"t"}`)}
	meta := `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"sluice","version":"t"}}`
	for _, tt := range []struct{ in, want string }{
		{`{}`, `{"resultType":"complete",` + meta + `}`},
		{` {"content":[]}`, ` {"resultType":"complete",` + meta + `,"content":[]}`},
		{`{"resultType":"input_required","inputRequests":{}}`, `{` + meta + `,"resultType":"input_required","inputRequests":{}}`},
		{`{"_meta":{"x":1},"content":[]}`, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"sluice","version":"t"},"x":1},"content":[]}`},
		{`{"_meta":{}}`, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"sluice","version":"t"}}}`},
		{`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{}}}`, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{}}}`},
	} {
		b := make([]byte, 2048)
		start := 1024
		end := start + copy(b[start:], tt.in)
		start = h.splice2026(b, start, end, false, false)
		assert.Equal(t, tt.want, string(b[start:end]), tt.in)
		assert.True(t, json.Valid(b[start:end]))
	}
}

func TestOriginAllowed(t *testing.T) {
	h := &server{s: &settings{origins: [][]byte{[]byte("https://app.example")}}}
	for _, tt := range []struct {
		origin, authority string
		want              bool
	}{
		{"https://app.example", "mcp.example", true},
		{"https://app.example/", "mcp.example", true},
		{"http://localhost:7114", "localhost:7114", true},
		{"http://127.0.0.1:7114", "127.0.0.1:7114", true},
		{"http://[::1]:7114", "[::1]:7114", true},
		// DNS rebinding: a rebound name sends Host and Origin alike.
		{"http://evil.example.com", "evil.example.com", false},
		{"http://evil.example", "localhost:7114", false},
		{"null", "localhost:7114", false},
	} {
		assert.Equal(t, tt.want, h.originAllowed([]byte(tt.origin), []byte(tt.authority)), tt.origin+" "+tt.authority)
	}
	// With options.hosts, Host is checked first, and a same-host Origin
	// of a listed host passes.
	h.s.hosts = [][]byte{[]byte("mcp.example")}
	assert.True(t, h.hostAllowed([]byte("MCP.example")))
	assert.False(t, h.hostAllowed([]byte("evil.example.com")))
	assert.True(t, h.originAllowed([]byte("https://mcp.example"), []byte("mcp.example")))
}

// stringEndBytewise is stringEnd without its eight-byte skip: the
// reference the skip must agree with.
func stringEndBytewise(b []byte, i int) int {
	for i++; i < len(b); {
		var closed bool
		if i, closed = stringStep(b, i); i < 0 || closed {
			return i
		}
	}
	return -1
}

// TestStringEnd puts each byte stringEnd must stop at (the closing quote,
// an escape, a control character, the first byte of a multi-byte or an
// invalid sequence) at every offset of a plain run, on both sides of an
// eight-byte word, and after bytes that carry a borrow in the word scan.
func TestStringEnd(t *testing.T) {
	specials := []string{`"`, `\"`, `\\`, `\u00e9`, `\x`, "\x00", "\x1f", "\x7f", " ", "é", "\xff", "\xe2\x82", `!`, `#`, `[`, `]`, "~"}
	for _, sp := range specials {
		for pre := 0; pre < 20; pre++ {
			for _, tail := range []string{``, `"`, `abc"`, "\x01\"", `\`} {
				s := `"` + strings.Repeat("a", pre) + sp + tail
				assert.Equal(t, stringEndBytewise([]byte(s), 0), stringEnd([]byte(s), 0), "%q", s)
				s = `"` + strings.Repeat(" ", pre) + sp + sp + strings.Repeat("z", 9) + tail
				assert.Equal(t, stringEndBytewise([]byte(s), 0), stringEnd([]byte(s), 0), "%q", s)
			}
		}
	}
	assert.Equal(t, 14, stringEnd([]byte(`"echo message"`), 0))
	assert.Equal(t, -1, stringEnd([]byte(`"unterminated plain run`), 0))
}

// FuzzStringEnd checks stringEnd against the bytewise reference at every
// quote of the input.
func FuzzStringEnd(f *testing.F) {
	for _, s := range []string{`"plain text here"`, `"a\"b\\c\u00e9"`, "\"\x01\"", `"é€😀"`, "\"\xff\"", `"abcdefgh"ijkl"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for i := range b {
			if b[i] != '"' {
				continue
			}
			if got, want := stringEnd(b, i), stringEndBytewise(b, i); got != want {
				t.Fatalf("stringEnd(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	})
}

// FuzzScanJSONMembers checks the members scanJSON records for a valid
// object against a walk of the object with nextMember, and that recording
// them changes no verdict.
func FuzzScanJSONMembers(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
		` { "a" : [ ] , "b":{}, "c" : "x\"y" , "d":-1.5e3,"e":true , "f" : [1,{"g":[]}] } `,
		`{"k\u0065y":null}`, `{}`, `[{"a":1}]`, `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var top topMembers
		ok := scanJSON(b, &top)
		if ok != validJSON(b) {
			t.Fatalf("scanJSON(%q) = %v, validJSON = %v", b, ok, validJSON(b))
		}
		if !ok {
			return
		}
		v := trimSpace(b)
		if v[0] != '{' {
			if top.n != 0 {
				t.Fatalf("scanJSON(%q) recorded %d members of a non-object", b, top.n)
			}
			return
		}
		var want []member
		for m, i, ok := nextMember(v, 0); ok; m, i, ok = nextMember(v, i) {
			want = append(want, m)
		}
		if top.over != (len(want) > maxTopMembers) {
			t.Fatalf("scanJSON(%q): over %v with %d members", b, top.over, len(want))
		}
		got := top.m[:top.n]
		if len(want) <= maxTopMembers && len(got) != len(want) {
			t.Fatalf("scanJSON(%q): %d members, nextMember finds %d", b, len(got), len(want))
		}
		for k := range got {
			if string(got[k].key) != string(want[k].key) || string(got[k].value) != string(want[k].value) {
				t.Fatalf("scanJSON(%q) member %d: %q: %q, nextMember: %q: %q", b, k, got[k].key, got[k].value, want[k].key, want[k].value)
			}
		}
	})
}

// TestMessageTake reads messages' members by their decoded keys: escaped
// keys count as their text, other keys (longer, or only alike) not at all,
// and a repeated member's last value wins.
func TestMessageTake(t *testing.T) {
	read := func(obj string) message {
		var m message
		for mb, i, ok := nextMember([]byte(obj), 0); ok; mb, i, ok = nextMember([]byte(obj), i) {
			m.take(mb)
		}
		return m
	}
	m := read(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":1}}`)
	assert.Equal(t, `"2.0"`, string(m.jsonrpc))
	assert.Equal(t, `1`, string(m.id))
	assert.Equal(t, `"tools/call"`, string(m.method))
	assert.Equal(t, `{"a":1}`, string(m.params))
	assert.Nil(t, m.result)
	assert.Nil(t, m.err)

	m = read(`{"\u006asonrpc":"2.0","\u0069d":7,"r\u0065sult":{},"\u0065rror":null}`)
	assert.Equal(t, `"2.0"`, string(m.jsonrpc), "an escaped key as long as the longest name")
	assert.Equal(t, `7`, string(m.id))
	assert.Equal(t, `{}`, string(m.result))
	assert.Equal(t, `null`, string(m.err))

	m = read(`{"ids":1,"\u0069d\u0073":2,"methods":"x","\u006asonrpcx":"2.0","Id":3,"":4,"\u0069d_and_a_longer_tail":5}`)
	assert.Equal(t, message{}, m, "keys that are not a member's name")

	m = read(`{"id":1,"id":2,"\u0069d":3,"method":"a","method":"b"}`)
	assert.Equal(t, `3`, string(m.id), "the last of a repeated member")
	assert.Equal(t, `"b"`, string(m.method))
}
