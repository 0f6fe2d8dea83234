package client

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// readAll runs body through a bodyReader in chunks split at cut (and
// every byte after it stays in one chunk), and returns the messages.
func readAll(t *testing.T, sse bool, body string, cut int) ([]string, error) {
	t.Helper()
	var r bodyReader
	r.reset(sse)
	var out []string
	for _, chunk := range []string{body[:cut], body[cut:]} {
		p := []byte(chunk)
		for len(p) > 0 {
			n, msg, err := r.next(p)
			if err != nil {
				return out, err
			}
			p = p[n:]
			if msg != nil {
				out = append(out, string(msg))
			}
		}
	}
	return out, nil
}

func TestBodyReader(t *testing.T) {
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t1","progress":50,"total":100,"message":"half \"way\""}}`
	result := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"}{\""}]}}`
	sse := "event: message\ndata: " + progress + "\n\nevent: message\nid: 9\ndata: " + result + "\n\n"
	for cut := 0; cut <= len(sse); cut++ {
		got, err := readAll(t, true, sse, cut)
		require.NoError(t, err)
		require.Equal(t, []string{progress, result}, got, "cut at %d", cut)
	}
	for cut := 0; cut <= len(result); cut++ {
		got, err := readAll(t, false, result+"\n", cut)
		require.NoError(t, err)
		require.Equal(t, []string{result}, got, "cut at %d", cut)
	}
	_, err := readAll(t, false, `{"jsonrpc":"2.0",}`, 3)
	require.Error(t, err)
}

func TestDecode(t *testing.T) {
	var tr jsonrpc.Tracker
	tests := []struct {
		name    string
		msg     string
		want    message
		wantErr bool
	}{
		{name: "result", msg: `{"jsonrpc":"2.0","id":7,"result":{"a":1}}`, want: message{id: []byte("7"), result: []byte(`{"a":1}`)}},
		{name: "error", msg: `{"error":{"code":-32602,"message":"x"},"id":"s","jsonrpc":"2.0"}`, want: message{id: []byte(`"s"`), err: []byte(`{"code":-32602,"message":"x"}`)}},
		{name: "notification", msg: `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`, want: message{method: []byte(`"notifications/message"`), params: []byte(`{"level":"info"}`)}},
		{name: "array", msg: `[1]`, wantErr: true},
		{name: "not JSON", msg: `{bad`, wantErr: true},
		{name: "method not a string", msg: `{"method":1}`, wantErr: true},
		{name: "result twice", msg: `{"jsonrpc":"2.0","id":7,"result":{},"result":{"a":1}}`, wantErr: true},
		{name: "id twice, escaped", msg: `{"jsonrpc":"2.0","id":7,"\u0069d":8,"result":{}}`, wantErr: true},
		{name: "other member twice", msg: `{"jsonrpc":"2.0","id":7,"result":{},"x":1,"x":2}`, want: message{id: []byte("7"), result: []byte(`{}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m message
			err := decode(&tr, []byte(tt.msg), &m)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, string(tt.want.id), string(m.id))
			assert.Equal(t, string(tt.want.method), string(m.method))
			assert.Equal(t, string(tt.want.params), string(m.params))
			assert.Equal(t, string(tt.want.result), string(m.result))
			assert.Equal(t, string(tt.want.err), string(m.err))
		})
	}
}

func TestNumber(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"12", 12, true}, {"-7", -7, true}, {"3.5", 3, true}, {"1e3", 1, true}, {"", 0, false}, {`"1"`, 0, false}, {"-", 0, false},
	} {
		n, ok := number([]byte(tt.in))
		assert.Equal(t, tt.ok, ok, tt.in)
		assert.Equal(t, tt.want, n, tt.in)
	}
}

func TestCapsAndMeta(t *testing.T) {
	caps := capsOf([]byte(`{"completions":{},"logging":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}`))
	assert.Equal(t, uint16(1|2|4|8|16|32|2048|4096|8192), caps)
	assert.Equal(t, `{}`, string(appendClientCaps(nil, 0)))
	assert.JSONEq(t, `{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}}}`,
		string(appendClientCaps(nil, 64|128|256|512|1024)))

	x := &exchange{}
	x.u = &upstream{}
	for _, tt := range []struct{ params, want string }{
		{`{}`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"sluice","version":"devel"}}}`},
		{`{"name":"a"}`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"sluice","version":"devel"}},"name":"a"}`},
		{`{"name":"a","_meta":{"progressToken":1}}`, `{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"sluice","version":"devel"},"progressToken":1}}`},
		{`{"_meta":{}}`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"sluice","version":"devel"}}}`},
	} {
		x.params = []byte(tt.params)
		got := x.spliceMeta(nil)
		assert.JSONEq(t, tt.want, string(got), tt.params)
	}
	in := `{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"t","io.modelcontextprotocol/clientCapabilities":{}}}`
	assert.JSONEq(t, `{"name":"a","_meta":{"progressToken":"t"}}`, string(rewriteMeta(nil, []byte(in), false, false, 0, nil)))
	// A 2026-07-28 downstream's clientCapabilities go upstream as they
	// are: they, not the session's bits, say what the client can answer.
	assert.JSONEq(t, `{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"sluice","version":"devel"},"progressToken":"t"}}`,
		string(rewriteMeta(nil, []byte(in), true, false, 128, nil)))
	in = `{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"c"}}}`
	assert.JSONEq(t, `{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"sluice","version":"devel"}}}`,
		string(rewriteMeta(nil, []byte(in), true, false, 0, nil)))
	// Without them, the session's CLIENT_* bits.
	in = `{"name":"a","_meta":{"progressToken":"t"}}`
	assert.JSONEq(t, `{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"sluice","version":"devel"},"progressToken":"t"}}`,
		string(rewriteMeta(nil, []byte(in), true, false, 128, nil)))
	// A 2025 session's level (logging/setLevel) goes as _meta's logLevel;
	// a 2026-07-28 downstream's own logLevel stays when there is none.
	assert.JSONEq(t, `{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"sluice","version":"devel"},"io.modelcontextprotocol/logLevel":"debug"}}`,
		string(rewriteMeta(nil, []byte(`{"name":"a"}`), true, false, 0, []byte(`"debug"`))))
	in = `{"name":"a","_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"error"}}`
	assert.JSONEq(t, `{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"sluice","version":"devel"},"io.modelcontextprotocol/logLevel":"error"}}`,
		string(rewriteMeta(nil, []byte(in), true, false, 0, nil)))
}

func TestAuthParam(t *testing.T) {
	v := []byte(`Bearer realm="mcp", error="invalid_token", scope="a b", resource_metadata="https://x/.well-known"`)
	assert.Equal(t, "mcp", string(authParam(v, "realm")))
	assert.Equal(t, "a b", string(authParam(v, "scope")))
	assert.Equal(t, "https://x/.well-known", string(authParam(v, "resource_metadata")))
	assert.Equal(t, "invalid_token", string(authParam(v, "error")))
	assert.Nil(t, authParam(v, "nope"))
}

func FuzzBodyReader(f *testing.F) {
	f.Add([]byte("id: 1\ndata: \n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"), true, 5)
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}`), false, 3)
	f.Fuzz(func(t *testing.T, body []byte, sse bool, cut int) {
		if cut < 0 || cut > len(body) {
			cut = len(body) / 2
		}
		var r bodyReader
		r.reset(sse)
		var tr jsonrpc.Tracker
		for _, chunk := range [][]byte{body[:cut], body[cut:]} {
			for len(chunk) > 0 {
				n, msg, err := r.next(chunk)
				if err != nil {
					return
				}
				if n == 0 && msg == nil {
					t.Fatalf("no progress on %q", chunk)
				}
				chunk = chunk[n:]
				if msg != nil {
					// The reader's members, from the ranges its own
					// tracker kept for a JSON body, are those of a
					// fresh scan of the message.
					var m, want message
					err := r.decode(&tr, msg, &m)
					var fresh jsonrpc.Tracker
					wantErr := decode(&fresh, msg, &want)
					if (err == nil) != (wantErr == nil) {
						t.Fatalf("decode of %q: reader %v, fresh scan %v", msg, err, wantErr)
					}
					if err == nil {
						if !sameMessage(m, want) {
							t.Fatalf("decode of %q: reader %+q, fresh scan %+q", msg, m, want)
						}
						_ = jsonrpc.Lookup(m.params, "progressToken")
						_, _ = number(jsonrpc.Lookup(m.params, "progress"))
						_ = capsOf(jsonrpc.Lookup(m.result, "capabilities"))
					}
				}
			}
		}
	})
}

// sameMessage reports whether a and b hold the same member bytes, a
// missing member (nil) differing from an empty one.
func sameMessage(a, b message) bool {
	eq := func(x, y []byte) bool { return (x == nil) == (y == nil) && string(x) == string(y) }
	return eq(a.id, b.id) && eq(a.method, b.method) && eq(a.params, b.params) && eq(a.result, b.result) && eq(a.err, b.err)
}

// TestBodyReaderDecode checks the members of a JSON body's message, read
// from the ranges of the reader's tracker, against a fresh scan, wherever
// the body is cut: with leading and trailing whitespace, every member, and
// a body that is not an object.
func TestBodyReaderDecode(t *testing.T) {
	bodies := []string{
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`,
		" \r\n\t{\"id\": \"a\" , \"error\" : {\"code\":-32601,\"message\":\"x\"},\"jsonrpc\":\"2.0\"}  \n",
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
		`{"jsonrpc":"2.0","id":1,"method":7}`,
	}
	for _, body := range bodies {
		for cut := 0; cut <= len(body); cut++ {
			var r bodyReader
			r.reset(false)
			var got, want message
			var gotErr, wantErr error
			seen := false
			for _, chunk := range []string{body[:cut], body[cut:]} {
				p := []byte(chunk)
				for len(p) > 0 {
					n, msg, err := r.next(p)
					require.NoError(t, err)
					p = p[n:]
					if msg != nil {
						require.False(t, seen, "one message per JSON body")
						seen = true
						var tr, fresh jsonrpc.Tracker
						gotErr = r.decode(&tr, msg, &got)
						wantErr = decode(&fresh, msg, &want)
					}
				}
			}
			require.True(t, seen, "body %q cut at %d", body, cut)
			assert.Equal(t, wantErr == nil, gotErr == nil, "body %q cut at %d: %v, %v", body, cut, gotErr, wantErr)
			assert.True(t, sameMessage(got, want), "body %q cut at %d: %+q, want %+q", body, cut, got, want)
		}
	}
	var r bodyReader
	r.reset(false)
	_, msg, err := r.next([]byte(`{"jsonrpc":"2.0","id":3,"result":{"a":[1,{"b":"}"}]}}`))
	require.NoError(t, err)
	var m message
	require.NoError(t, r.decode(nil, msg, &m))
	assert.Equal(t, "3", string(m.id))
	assert.Equal(t, `{"a":[1,{"b":"}"}]}`, string(m.result))
	assert.Nil(t, m.method)
}
