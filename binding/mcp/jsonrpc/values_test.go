package jsonrpc_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

func TestUnquote(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		aliases bool // the result is a sub-slice of the input
		err     error
	}{
		{name: "plain", in: `"tools/call"`, want: "tools/call", aliases: true},
		{name: "empty", in: `""`, want: "", aliases: true},
		{name: "valid UTF-8", in: `"héllo 🌍"`, want: "héllo 🌍", aliases: true},
		{name: "escaped slash", in: `"tools\/call"`, want: "tools/call"},
		{name: "all short escapes", in: `"\"\\\/\b\f\n\r\t"`, want: "\"\\/\b\f\n\r\t"},
		{name: "unicode escapes", in: `"\u0041\u00e9\u4e16"`, want: "Aé世"},
		{name: "surrogate pair", in: `"\ud83c\udf0d"`, want: "🌍"},
		{name: "lone high surrogate", in: `"\ud800x"`, want: "\ufffdx"},
		{name: "lone low surrogate", in: `"\udc00"`, want: "\ufffd"},
		{name: "high surrogate twice", in: `"\ud800\ud800"`, want: "\ufffd\ufffd"},
		{name: "invalid UTF-8 replaced", in: "\"a\xffb\"", want: "a\ufffdb"},
		{name: "invalid UTF-8 before an escape", in: "\"\xe4\\b\"", want: "\ufffd\b"},
		{name: "valid UTF-8 before an escape", in: "\"é\\n\"", want: "é\n"},
		{name: "not a string", in: `12`, err: jsonrpc.ErrNotString},
		{name: "unterminated", in: `"abc`, err: jsonrpc.ErrNotString},
		{name: "lone quote", in: `"`, err: jsonrpc.ErrNotString},
		{name: "quote inside", in: `"a"b"`, err: jsonrpc.ErrSyntax},
		{name: "control byte", in: "\"a\nb\"", err: jsonrpc.ErrSyntax},
		{name: "bad escape", in: `"\x"`, err: jsonrpc.ErrSyntax},
		{name: "single-quote escape", in: `"\'"`, err: jsonrpc.ErrSyntax},
		{name: "short unicode escape", in: `"\u12"`, err: jsonrpc.ErrSyntax},
		{name: "trailing backslash", in: `"a\"`, err: jsonrpc.ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in)
			got, err := jsonrpc.Unquote(make([]byte, 0, 64), in)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				if tt.err == jsonrpc.ErrSyntax {
					assert.False(t, json.Valid(in))
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			var want string
			require.NoError(t, json.Unmarshal(in, &want))
			assert.Equal(t, want, string(got), "encoding/json decodes it so")
			if tt.aliases && len(got) > 0 {
				assert.Same(t, &in[1], &got[0])
			}
		})
	}
}

// TestUnquoteTo decodes into a buffer of fixed size: always a copy, and
// ErrTooLong rather than a grown buffer.
func TestUnquoteTo(t *testing.T) {
	var buf [16]byte
	s, err := jsonrpc.UnquoteTo(buf[:0], []byte(`"a\"b\\c\/d\n\u00e9\ud83d\ude00"`))
	require.NoError(t, err)
	assert.Equal(t, "a\"b\\c/d\né😀", string(s))
	assert.Same(t, &buf[0], &s[0], "decoded into the buffer")
	in := []byte(`"plain"`)
	s, err = jsonrpc.UnquoteTo(buf[:0], in)
	require.NoError(t, err)
	assert.Equal(t, "plain", string(s))
	assert.Same(t, &buf[0], &s[0], "copied, not aliased")
	for _, in := range []string{`"abc"`, `"a\u00e9"`, "\"\xff\"", `"\ud800"`} {
		_, err = jsonrpc.UnquoteTo(buf[:0:2], []byte(in))
		assert.ErrorIs(t, err, jsonrpc.ErrTooLong, "%s does not fit two bytes", in)
	}
	s, err = jsonrpc.UnquoteTo(buf[:0:3], []byte(`"\ud800"`))
	require.NoError(t, err)
	assert.Equal(t, "\ufffd", string(s), "a lone surrogate, in exactly its room")
	_, err = jsonrpc.UnquoteTo(buf[:0], []byte(`"\q"`))
	assert.ErrorIs(t, err, jsonrpc.ErrSyntax)
	_, err = jsonrpc.UnquoteTo(buf[:0], []byte(`1`))
	assert.ErrorIs(t, err, jsonrpc.ErrNotString)
}

func TestMethodAndVersion(t *testing.T) {
	m, err := jsonrpc.Method(nil, []byte(`"notifications\/initialized"`))
	require.NoError(t, err)
	assert.Equal(t, "notifications/initialized", string(m))
	_, err = jsonrpc.Method(nil, []byte(`null`))
	assert.ErrorIs(t, err, jsonrpc.ErrNotString)

	for in, want := range map[string]bool{
		`"2.0"`: true, `"2\u002e0"`: true, `"\u0032\u002E\u0030"`: true,
		`"2.0 "`: false, `2.0`: false, `"1.0"`: false, `""`: false, ``: false,
		`"\u0032\u002E\u0030\u0030"`: false, "\"\xff\xff\xff\"": false,
	} {
		assert.Equal(t, want, jsonrpc.Version([]byte(in)), in)
	}
}

func TestParseID(t *testing.T) {
	tests := []struct {
		in   string
		kind jsonrpc.IDKind
		want string
		err  error
	}{
		{in: `1`, kind: jsonrpc.IDNumber, want: `1`},
		{in: `-42`, kind: jsonrpc.IDNumber, want: `-42`},
		{in: `1.5e3`, kind: jsonrpc.IDNumber, want: `1.5e3`},
		{in: `"abc-1"`, kind: jsonrpc.IDString, want: `abc-1`},
		{in: `"\u0061bc"`, kind: jsonrpc.IDString, want: `abc`},
		{in: `""`, kind: jsonrpc.IDString, want: ``},
		{in: `null`, kind: jsonrpc.IDNull, want: `null`},
		{in: ``, kind: jsonrpc.IDNone},
		{in: `true`, err: jsonrpc.ErrInvalidID},
		{in: `{"a":1}`, err: jsonrpc.ErrInvalidID},
		{in: `[1]`, err: jsonrpc.ErrInvalidID},
		{in: `01`, err: jsonrpc.ErrInvalidID},
		{in: `1.`, err: jsonrpc.ErrInvalidID},
		{in: `-`, err: jsonrpc.ErrInvalidID},
		{in: `1e`, err: jsonrpc.ErrInvalidID},
		{in: `"a`, err: jsonrpc.ErrInvalidID},
		{in: `nul`, err: jsonrpc.ErrInvalidID},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			kind, canon, err := jsonrpc.ParseID(nil, []byte(tt.in))
			if tt.err != nil {
				assert.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.kind, kind)
			assert.Equal(t, tt.want, string(canon))
		})
	}
}

func TestValueAllocs(t *testing.T) {
	plain, escaped := []byte(`"tools/call"`), []byte(`"tools\/call"`)
	id := []byte(`"req-\u0031"`)
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		if m, err := jsonrpc.Method(buf, plain); err != nil || len(m) != 10 {
			panic(err)
		}
		if m, err := jsonrpc.Method(buf, escaped); err != nil || len(m) != 10 {
			panic(err)
		}
		if !jsonrpc.Version([]byte(`"2\u002e0"`)) || jsonrpc.Version([]byte("\"\xff\xff\xff\"")) {
			panic("version")
		}
		if s, err := jsonrpc.UnquoteTo(buf, escaped); err != nil || len(s) != 10 {
			panic(err)
		}
		if _, _, err := jsonrpc.ParseID(buf, id); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
}

// TestFastjsonParams backs the package documentation: a reused
// fastjson.Parser parses params ranges without allocating.
func TestFastjsonParams(t *testing.T) {
	msg := []byte(toolsCall)
	var tr jsonrpc.Tracker
	_, done, err := tr.Feed(msg)
	require.NoError(t, err)
	require.True(t, done)
	params := tr.Member(jsonrpc.MemberParams).Bytes(msg)
	var p fastjson.Parser
	allocs := testing.AllocsPerRun(100, func() {
		v, err := p.ParseBytes(params)
		if err != nil || string(v.GetStringBytes("name")) != "get_weather" {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
}
