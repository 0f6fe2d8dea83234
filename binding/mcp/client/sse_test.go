package client

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// readBody runs body through r in two chunks split at cut, as the sinks
// do: as a response with a Content-Length (length), over with its last
// byte, or as one without, over at its END, which brings no bytes. It
// gives fn each message, with whether the body was over when it came.
func readBody(r *bodyReader, body []byte, cut int, length bool, fn func(msg []byte, ended bool)) error {
	got := 0
	step := func(p []byte, over, end bool) error {
		for len(p) > 0 || r.held() {
			n, msg, err := r.next(p, over)
			if err != nil {
				return err
			}
			p = p[n:]
			if msg == nil {
				return nil
			}
			fn(msg, end || got == len(body))
		}
		return nil
	}
	for _, chunk := range [][]byte{body[:cut], body[cut:]} {
		got += len(chunk)
		if err := step(chunk, length && got == len(body), false); err != nil {
			return err
		}
	}
	return step(nil, true, true)
}

// readAll reads body with readBody, with and without a Content-Length,
// and returns the messages; both ways must agree.
func readAll(t *testing.T, sse bool, body string, cut int) ([]string, error) {
	t.Helper()
	var outs [2][]string
	var errs [2]error
	for i, length := range []bool{true, false} {
		var r bodyReader
		r.reset(sse)
		errs[i] = readBody(&r, []byte(body), cut, length, func(msg []byte, ended bool) {
			if !sse {
				require.True(t, ended, "a JSON body's message before the body is over")
			}
			outs[i] = append(outs[i], string(msg))
		})
	}
	require.Equal(t, errs[0] == nil, errs[1] == nil, "%v, %v", errs[0], errs[1])
	require.Equal(t, outs[0], outs[1])
	return outs[0], errs[0]
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

// TestBodyReaderTrailing: a JSON body is its one value, with whitespace
// around it, as JSON.parse and encoding/json read it. Anything after the
// value fails the body, wherever the body is cut and whether or not it
// has a Content-Length, and its message is not given.
func TestBodyReaderTrailing(t *testing.T) {
	result := `{"jsonrpc":"2.0","id":7,"result":{}}`
	for _, tail := range []string{"x", `{"jsonrpc":"2.0","id":7,"result":{"other":1}}`, " \n0", "\x00", "\n\n]"} {
		body := result + tail
		for cut := 0; cut <= len(body); cut++ {
			got, err := readAll(t, false, body, cut)
			require.ErrorIs(t, err, errTrailing, "tail %q cut at %d", tail, cut)
			require.Empty(t, got, "tail %q cut at %d", tail, cut)
		}
	}
	body := " " + result + " \r\n\t "
	for cut := 0; cut <= len(body); cut++ {
		got, err := readAll(t, false, body, cut)
		require.NoError(t, err)
		require.Equal(t, []string{" " + result}, got, "cut at %d", cut)
	}
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
		for _, length := range []bool{true, false} {
			var r bodyReader
			r.reset(sse)
			var tr jsonrpc.Tracker
			msgs := 0
			err := readBody(&r, body, cut, length, func(msg []byte, ended bool) {
				msgs++
				if !sse && (!ended || msgs > 1) {
					t.Fatalf("JSON body %q: message %d given, body over %v", body, msgs, ended)
				}
				// The reader's members, from the ranges its own tracker
				// kept for a JSON body, are those of a fresh scan of the
				// message.
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
			})
			if !sse && err == nil && msgs == 1 && !json.Valid(body) {
				// A JSON body given as a message is one value and
				// whitespace, as encoding/json reads it.
				t.Fatalf("JSON body %q read as a message; encoding/json refuses it", body)
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
			err := readBody(&r, []byte(body), cut, cut%2 == 0, func(msg []byte, _ bool) {
				require.False(t, seen, "one message per JSON body")
				seen = true
				var tr, fresh jsonrpc.Tracker
				gotErr = r.decode(&tr, msg, &got)
				wantErr = decode(&fresh, msg, &want)
			})
			require.NoError(t, err)
			require.True(t, seen, "body %q cut at %d", body, cut)
			assert.Equal(t, wantErr == nil, gotErr == nil, "body %q cut at %d: %v, %v", body, cut, gotErr, wantErr)
			assert.True(t, sameMessage(got, want), "body %q cut at %d: %+q, want %+q", body, cut, got, want)
		}
	}
	var r bodyReader
	r.reset(false)
	_, msg, err := r.next([]byte(`{"jsonrpc":"2.0","id":3,"result":{"a":[1,{"b":"}"}]}}`), true)
	require.NoError(t, err)
	var m message
	require.NoError(t, r.decode(nil, msg, &m))
	assert.Equal(t, "3", string(m.id))
	assert.Equal(t, `{"a":[1,{"b":"}"}]}`, string(m.result))
	assert.Nil(t, m.method)
}
