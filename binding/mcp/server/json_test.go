package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpb "github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// TestValidJSON pins the rules of a body held whole: RFC 8259, its
// strings UTF-8, nested at most maxJSONDepth deep.
func TestValidJSON(t *testing.T) {
	for _, s := range []string{
		`{}`, ` [ ] `, `"x"`, `0`, `-0.5e+10`, `true`, `null`, `{"a":[1,{"b":"\u00e9\n"}],"c":false}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, "\t{\"a\" : 1 }\r\n",
		strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth),
	} {
		assert.True(t, jsonrpc.Valid([]byte(s), jsonOptions), s)
	}
	for _, s := range []string{
		``, ` `, `{`, `{bad`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `01`, `1.`, `.5`, `-`, `1e`, `"\x"`, "\"\x01\"",
		`tru`, `nulls`, `{} {}`, `[}`, `{]`, `"` + "\xff" + `"`, `{"a":1}}`, strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1),
	} {
		assert.False(t, jsonrpc.Valid([]byte(s), jsonOptions), s)
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
	for _, tt := range []struct {
		in, want  string
		cacheable bool
	}{
		{`{}`, `{"resultType":"complete",` + meta + `}`, false},
		{` {"content":[]}`, ` {"resultType":"complete",` + meta + `,"content":[]}`, false},
		{`{"resultType":"input_required","inputRequests":{}}`, `{` + meta + `,"resultType":"input_required","inputRequests":{}}`, false},
		{`{"_meta":{"x":1},"content":[]}`, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"sluice","version":"t"},"x":1},"content":[]}`, false},
		{`{"_meta":{}}`, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"sluice","version":"t"}}}`, false},
		{`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{}}}`, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{}}}`, false},
		// A list or read (cacheable) gets ttlMs and cacheScope where it has none.
		{`{"tools":[{"name":"a","ttlMs":5,"_meta":{}}]}`,
			`{"resultType":"complete",` + meta + `,"ttlMs":0,"cacheScope":"public","tools":[{"name":"a","ttlMs":5,"_meta":{}}]}`, true},
		{`{"ttlMs":60000,"tools":[]}`, `{"resultType":"complete",` + meta + `,"cacheScope":"public","ttlMs":60000,"tools":[]}`, true},
		{`{"cacheScope":"private","tools":[]}`, `{"resultType":"complete",` + meta + `,"ttlMs":0,"cacheScope":"private","tools":[]}`, true},
		{`{"resultType":"input_required","inputRequests":{}}`, `{` + meta + `,"resultType":"input_required","inputRequests":{}}`, true},
		{`{"resultType":"complete","tools":[]}`, `{` + meta + `,"ttlMs":0,"cacheScope":"public","resultType":"complete","tools":[]}`, true},
		{`{"_meta":{"x":1},"tools":[]}`, `{"resultType":"complete","ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"sluice","version":"t"},"x":1},"tools":[]}`, true},
	} {
		rewriteBothWays(t, tt.in, tt.want, func(b []byte, start, end int, top *jsonrpc.Tracker) int {
			return h.splice2026(b, start, end, tt.cacheable, top)
		})
	}
}

// rewriteBothWays runs rewrite, which rewrites in in place and returns
// where it now starts, twice: walking it (no tracker) and told by the
// Tracker that validated it. Both must give want, valid JSON.
func rewriteBothWays(t *testing.T, in, want string, rewrite func(b []byte, start, end int, top *jsonrpc.Tracker) int) {
	t.Helper()
	for _, tracked := range []bool{false, true} {
		b := make([]byte, 2048)
		start := 1024
		end := start + copy(b[start:], in)
		var top *jsonrpc.Tracker
		if tracked {
			top = new(jsonrpc.Tracker)
			require.NoError(t, top.Track(jsonrpc.TrimSpace(b[start:end])))
		}
		start = rewrite(b, start, end, top)
		assert.Equal(t, want, string(b[start:end]), "%s (tracked: %v)", in, tracked)
		assert.True(t, json.Valid(b[start:end]))
	}
}

func TestStrip2026(t *testing.T) {
	h := &server{}
	for _, tt := range []struct{ in, want string }{
		{`{"resultType":"complete"}`, `{}`},
		{` {"resultType":"complete","content":[]} `, `{"content":[]}`},
		{`{"content":[],"resultType":"complete","isError":false}`, `{"content":[],"isError":false}`},
		{`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"}},"ttlMs":0,"cacheScope":"public","tools":[]}`, `{"tools":[]}`},
		{`{"_meta":{"io.modelcontextprotocol/serverInfo":{},"io.modelcontextprotocol/related-task":{"taskId":"t"},"x":1},"resultType":"complete"}`,
			`{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"},"x":1}}`},
		{`{ "content" : [ 1, 2 ] , "resultType" : "complete" , "structuredContent" : { "a" : "resultType" } }`,
			`{"content":[ 1, 2 ],"structuredContent":{ "a" : "resultType" }}`},
		{`{"resultType":"complete","_meta":"odd"}`, `{"_meta":"odd"}`},
		{`{"tools":[{"name":"a","ttlMs":1}],"ttlMs":5}`, `{"tools":[{"name":"a","ttlMs":1}]}`},
		{`{"cacheScope":"private","tools":[]}`, `{"tools":[]}`},
		{`{"tools":[{"name":"a","_meta":{"io.modelcontextprotocol/serverInfo":{}}}]}`, `{"tools":[{"name":"a","_meta":{"io.modelcontextprotocol/serverInfo":{}}}]}`},
		// nothing to strip: left as it is, spacing included
		{` { "tools" : [ ] , "_meta" : { "x" : 1 } } `, ` { "tools" : [ ] , "_meta" : { "x" : 1 } } `},
	} {
		rewriteBothWays(t, tt.in, tt.want, func(b []byte, start, end int, top *jsonrpc.Tracker) int {
			return h.strip2026(b, start, end, top)
		})
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

// TestMessageOf reads messages' members by their decoded keys: escaped
// keys count as their text, other keys (longer, or only alike) not at all,
// and a repeated member's last value wins.
func TestMessageOf(t *testing.T) {
	var tr jsonrpc.Tracker
	tr.SetOptions(jsonOptions)
	read := func(obj string) message {
		require.NoError(t, tr.Track([]byte(obj)))
		return messageOf(&tr, []byte(obj))
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

// TestParamsDup: the members of params the server reads, and those of
// _meta and ref, given twice, keys compared as they decode; other
// members, nested ones and one of each pass.
func TestParamsDup(t *testing.T) {
	for _, tt := range []struct{ params, dup string }{
		{`{"name":"a","arguments":{"x":1,"x":2},"_meta":{"progressToken":1}}`, ""},
		{`{"name":"a","other":1,"other":2}`, ""},
		{`{"name":"a","\u006eame":"b"}`, "name"},
		{`{"uri":"a","cursor":"b","uri":"c"}`, "uri"},
		{`{"cursor":null,"cursor":"x"}`, "cursor"},
		{`{"arguments":{},"name":"a","arguments":{}}`, "arguments"},
		{`{"requestState":"a","requestState":"a"}`, "requestState"},
		{`{"_meta":{},"_meta":{}}`, "_meta"},
		{`{"_meta":{"progressToken":1,"progressToken":2}}`, "progressToken"},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"a","io.modelcontextprotocol/protocolVersion":"b"}}`, "io.modelcontextprotocol/protocolVersion"},
		{`{"_meta":{"other":1,"other":2}}`, ""},
		{`{"ref":{"type":"ref/prompt","name":"a","name":"b"}}`, "name"},
		{`{"ref":{"type":"ref/prompt","type":"ref/resource","uri":"x"}}`, "type"},
		{`{"ref":{},"ref":{}}`, "ref"},
		{`{"ref":"not an object","_meta":[1,1]}`, ""},
	} {
		assert.Equal(t, tt.dup, paramsDup([]byte(tt.params)), tt.params)
	}
	b := []byte(`{"name":"echo","arguments":{"message":"hi"},"_meta":{"progressToken":7}}`)
	assert.Zero(t, testing.AllocsPerRun(100, func() { paramsDup(b) }))
}

// TestTrackList: a list reply with the bytes of the last one is not read
// again, and reads the same; any other reply is read, a malformed one
// refused (and forgotten), whatever came before it.
func TestTrackList(t *testing.T) {
	h := &server{}
	h.lists.SetOptions(jsonOptions)
	a := []byte(`{"tools":[{"name":"a"}],"resultType":"complete","ttlMs":5}`)
	top := h.trackList(a)
	require.NotNil(t, top)
	want := top.Member(jsonrpc.MemberResultType).Bytes(a)
	require.Equal(t, `"complete"`, string(want))
	keys := top.Keys()
	require.True(t, h.lastOK)

	again := []byte(string(a)) // the same bytes, elsewhere
	top = h.trackList(again)
	require.NotNil(t, top)
	assert.Equal(t, `"complete"`, string(top.Member(jsonrpc.MemberResultType).Bytes(again)))
	assert.Equal(t, keys, top.Keys())

	for _, bad := range []string{`{"tools":[}`, `[1,`, `{"tools":[{"name":"a"}],"resultType":"complete","ttlMs":5`} {
		assert.Nil(t, h.trackList([]byte(bad)), bad)
		assert.False(t, h.lastOK, "a refused reply is not remembered: %s", bad)
	}
	b := []byte(`{"tools":[],"cacheScope":"public"}`)
	top = h.trackList(b)
	require.NotNil(t, top)
	assert.Empty(t, top.Member(jsonrpc.MemberResultType).Bytes(b), "b is read, not taken for a")
	assert.NotEqual(t, keys, top.Keys())
	assert.NotNil(t, h.trackList(a))
}
