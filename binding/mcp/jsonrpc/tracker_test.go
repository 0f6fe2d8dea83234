package jsonrpc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// rangeTests give each message's tracked members as the text of their
// values; members not listed are absent.
var rangeTests = []struct {
	name string
	in   string
	kind jsonrpc.Kind
	want map[jsonrpc.Member]string
	dups jsonrpc.Members
}{
	{
		name: "tools/call request",
		in:   `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Paris"}}}`,
		kind: jsonrpc.KindObject,
		want: map[jsonrpc.Member]string{
			jsonrpc.MemberJSONRPC: `"2.0"`,
			jsonrpc.MemberID:      `1`,
			jsonrpc.MemberMethod:  `"tools/call"`,
			jsonrpc.MemberParams:  `{"name":"get_weather","arguments":{"location":"Paris"}}`,
		},
	},
	{
		name: "members in any order, with whitespace",
		in:   " \r\n\t{ \"params\" :\n[ 1 , 2 ] , \"method\"\t:\t\"ping\" ,\"id\" : \"a-1\" , \"jsonrpc\" : \"2.0\" } ",
		kind: jsonrpc.KindObject,
		want: map[jsonrpc.Member]string{
			jsonrpc.MemberJSONRPC: `"2.0"`,
			jsonrpc.MemberID:      `"a-1"`,
			jsonrpc.MemberMethod:  `"ping"`,
			jsonrpc.MemberParams:  `[ 1 , 2 ]`,
		},
	},
	{
		name: "nested members are not top-level ones",
		in: `{"params":{"method":"evil","id":9,"params":{"result":1},"error":null},` +
			`"method":"tools/call","x":{"jsonrpc":"1.0","id":[{"method":2}]},"id":7}`,
		kind: jsonrpc.KindObject,
		want: map[jsonrpc.Member]string{
			jsonrpc.MemberMethod: `"tools/call"`,
			jsonrpc.MemberParams: `{"method":"evil","id":9,"params":{"result":1},"error":null}`,
			jsonrpc.MemberID:     `7`,
		},
	},
	{
		name: "members inside arrays and strings",
		in:   `{"a":[{"method":"x"}],"b":"\"method\":\"y\"","method":"z"}`,
		kind: jsonrpc.KindObject,
		want: map[jsonrpc.Member]string{jsonrpc.MemberMethod: `"z"`},
	},
	{
		name: "escaped quotes and backslashes in values",
		in:   `{"id":"a\"b\\","method":"say","params":{"text":"he said \"hi\\\" \/ \b\f\n\r\t"}}`,
		kind: jsonrpc.KindObject,
		want: map[jsonrpc.Member]string{
			jsonrpc.MemberID:     `"a\"b\\"`,
			jsonrpc.MemberMethod: `"say"`,
			jsonrpc.MemberParams: `{"text":"he said \"hi\\\" \/ \b\f\n\r\t"}`,
		},
	},
	{
		name: "escaped keys",
		in:   `{"\u006dethod":"m","\u0069\u0064":2,"para\u006Ds":{},"jsonrpc\u0000":1,"r\u00e9sult":1,"\"error":1,"error\"":1,"result\/":1}`,
		kind: jsonrpc.KindObject,
		want: map[jsonrpc.Member]string{
			jsonrpc.MemberMethod: `"m"`,
			jsonrpc.MemberID:     `2`,
			jsonrpc.MemberParams: `{}`,
		},
	},
	{
		name: "near-miss keys",
		in:   `{"metho":1,"methods":2,"Method":3,"ID":4,"":5,"jsonrpc2":6,"paramsparams":7,"e":8}`,
		kind: jsonrpc.KindObject,
		want: map[jsonrpc.Member]string{},
	},
	{
		name: "unicode in values and keys",
		in:   `{"method":"héllo 世界 🌍","params":{"ключ":"\u00e9\ud83c\udf0d\uD800"},"🔑":"x"}`,
		kind: jsonrpc.KindObject,
		want: map[jsonrpc.Member]string{
			jsonrpc.MemberMethod: `"héllo 世界 🌍"`,
			jsonrpc.MemberParams: `{"ключ":"\u00e9\ud83c\udf0d\uD800"}`,
		},
	},
	{
		name: "numbers of every shape",
		in:   `{"id":-0,"params":[0,-1,12,1.5,-0.25,1e9,1E+9,2e-07,-3.5E-3,0e0,123456789012345678901234567890],"result":0.1,"error":-9}`,
		kind: jsonrpc.KindObject,
		want: map[jsonrpc.Member]string{
			jsonrpc.MemberID:     `-0`,
			jsonrpc.MemberParams: `[0,-1,12,1.5,-0.25,1e9,1E+9,2e-07,-3.5E-3,0e0,123456789012345678901234567890]`,
			jsonrpc.MemberResult: `0.1`,
			jsonrpc.MemberError:  `-9`,
		},
	},
	{
		name: "literals",
		in:   `{"id":null,"result":true,"error":false,"params":[true,false,null]}`,
		kind: jsonrpc.KindObject,
		want: map[jsonrpc.Member]string{
			jsonrpc.MemberID:     `null`,
			jsonrpc.MemberResult: `true`,
			jsonrpc.MemberError:  `false`,
			jsonrpc.MemberParams: `[true,false,null]`,
		},
	},
	{
		name: "an MCP result's resultType and requestState, among members that are not tracked",
		in:   `{"content":[{"type":"text","text":"x"}],"resultTypes":1,"resultType":"input_required","requestStat":0,"requestState":"s","requestStates":2}`,
		kind: jsonrpc.KindObject,
		want: map[jsonrpc.Member]string{
			jsonrpc.MemberResultType:   `"input_required"`,
			jsonrpc.MemberRequestState: `"s"`,
		},
	},
	{
		name: "error response",
		in:   `{"jsonrpc":"2.0","id":"7","error":{"code":-32602,"message":"Unknown tool: nope","data":{"tool":"nope"}}}`,
		kind: jsonrpc.KindObject,
		want: map[jsonrpc.Member]string{
			jsonrpc.MemberJSONRPC: `"2.0"`,
			jsonrpc.MemberID:      `"7"`,
			jsonrpc.MemberError:   `{"code":-32602,"message":"Unknown tool: nope","data":{"tool":"nope"}}`,
		},
	},
	{
		name: "duplicates: the last wins",
		in:   `{"method":"a","params":{"x":1},"method":"b","params":[2]}`,
		kind: jsonrpc.KindObject,
		want: map[jsonrpc.Member]string{
			jsonrpc.MemberMethod: `"b"`,
			jsonrpc.MemberParams: `[2]`,
		},
		dups: 1<<jsonrpc.MemberMethod | 1<<jsonrpc.MemberParams,
	},
	{
		name: "empty object",
		in:   `{}`,
		kind: jsonrpc.KindObject,
		want: map[jsonrpc.Member]string{},
	},
	{
		name: "batch",
		in:   `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		kind: jsonrpc.KindArray,
		want: map[jsonrpc.Member]string{},
	},
	{name: "string", in: `"method"`, kind: jsonrpc.KindString, want: map[jsonrpc.Member]string{}},
	{name: "number", in: `-12.5e3`, kind: jsonrpc.KindNumber, want: map[jsonrpc.Member]string{}},
	{name: "true", in: `true`, kind: jsonrpc.KindBool, want: map[jsonrpc.Member]string{}},
	{name: "false", in: ` false `, kind: jsonrpc.KindBool, want: map[jsonrpc.Member]string{}},
	{name: "null", in: `null`, kind: jsonrpc.KindNull, want: map[jsonrpc.Member]string{}},
}

func TestTrackerRanges(t *testing.T) {
	tr := jsonrpc.NewTracker(jsonrpc.Options{})
	for _, tt := range rangeTests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in)
			o := feed(t, tr, in, nil)
			require.True(t, o.Done, o.Err)
			assert.Equal(t, tt.kind, o.Kind)
			assert.Equal(t, strings.TrimSpace(tt.in), string(o.Value.Bytes(in)))
			got := map[jsonrpc.Member]string{}
			var complete jsonrpc.Members
			for i, m := range members {
				if r := o.Ranges[i]; r != (jsonrpc.Range{}) {
					got[m] = string(r.Bytes(in))
					complete |= 1 << m
				}
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, complete, o.Complete)
			assert.Equal(t, tt.dups, o.Dups)
			checkOracle(t, in, o, false)
		})
	}
}

// splitMessages are fed at every split point and byte by byte.
var splitMessages = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather","arguments":{"q":"caf\u00e9 \"x\" 🌍","n":-1.5e+3,"ok":true,"v":null,"f":false}}}`,
	`{"\u006dethod":"a\\b","id":"x\ud83c\udf0dy","params":[[],{},[{}],""],"jsonrpc":"2.0"}`,
	` [ {"id": 0 } , 12 , "s" , true ] `,
	`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"line1\nline2\ttab"}],"isError":false}}`,
	`1234.5e-6`,
	`{"id":1,"method":"x","params":{"a":[1,2,}}`,
	`{"id":1,"method":"x","params":{"a":"\u12G4"}}`,
	`{"id":1,"method" "x"}`,
	`{"id":01}`,
	`{"id":tru}`,
	`{"id":1,"method":"x"`,
	"{\"method\":\"caf\xc3\xa9\",\"bad\":\"\xff\xfe\",\"cut\":\"\xe2\x82\"}",
	`{"params":{"k\u0065y":{"\n\"":[1e-2,-0.0E+1]}},"id":"\/"}`,
	"[\"\xc2\x80\xe0\xa0\x80\xe1\x80\x80\xed\x9f\xbf\xee\x80\x80\xf0\x90\x80\x80\xf1\x80\x80\x80\xf4\x8f\xbf\xbf\"]",
	"[\"\xe0\x80\x80\", \"\xf0\x80\"]",
	"{\"a\":[[[[]]]],\"b\":{\"c\":{}},\"d\":[{},{\"e\":[]}]}",
}

func TestTrackerSplits(t *testing.T) {
	for _, strict := range []bool{false, true} {
		tr := jsonrpc.NewTracker(jsonrpc.Options{StrictUTF8: strict})
		for _, msg := range splitMessages {
			in := []byte(msg)
			whole := feed(t, tr, in, nil)
			checkOracle(t, in, whole, strict)
			for k := 1; k < len(in); k++ {
				require.Equal(t, whole, feed(t, tr, in, []int{k}), "split at %d of %q", k, msg)
			}
			bytewise := make([]int, 0, len(in))
			for k := 1; k < len(in); k++ {
				bytewise = append(bytewise, k)
			}
			require.Equal(t, whole, feed(t, tr, in, bytewise), "byte by byte: %q", msg)
			// Empty chunks change nothing.
			n, done, err := tr.Feed(nil)
			require.Zero(t, n)
			require.Equal(t, whole.Done, done)
			require.Equal(t, whole.Err != "", err != nil)
		}
	}
}

// TestTrackerProgress checks that members are reported as soon as their
// values close, before the message ends.
func TestTrackerProgress(t *testing.T) {
	in := []byte(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x","arguments":{}},"_meta":{"k":"v"}}`)
	paramsEnd := bytes.Index(in, []byte(`,"_meta"`))
	var tr jsonrpc.Tracker
	for k := 0; k < len(in); k++ {
		n, done, err := tr.Feed(in[k : k+1])
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, k == len(in)-1, done)
		// The params object closes with its '}'.
		require.Equal(t, k+1 >= paramsEnd, tr.ParamsDone(), "after byte %d", k)
		if r := tr.Member(jsonrpc.MemberParams); k+1 >= paramsEnd {
			require.Equal(t, jsonrpc.Range{Start: int64(bytes.Index(in, []byte(`{"name"`))), End: int64(paramsEnd)}, r)
		} else if k >= bytes.Index(in, []byte(`{"name"`)) {
			require.NotZero(t, r.Start)
			require.False(t, r.Complete())
		}
		// A number ends at the byte after it.
		require.Equal(t, k >= bytes.Index(in, []byte(`5,`))+1, tr.Members().Has(jsonrpc.MemberID), "after byte %d", k)
	}
}

// TestTrackerTrailing checks where Feed stops after the value.
func TestTrackerTrailing(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		done bool
	}{
		{name: "object then whitespace", in: "{}  \n", n: 2, done: true},
		{name: "object then next message", in: `{"id":1}{"id":2}`, n: 8, done: true},
		{name: "leading whitespace", in: "\n\n {}", n: 5, done: true},
		{name: "string", in: `"a" x`, n: 3, done: true},
		{name: "literal", in: `nullx`, n: 4, done: true},
		{name: "number ends at a delimiter", in: `12 `, n: 2, done: true},
		{name: "number at the end of the chunk", in: `12`, n: 2, done: false},
		{name: "leading zero ends a number", in: `01`, n: 1, done: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tr jsonrpc.Tracker
			n, done, err := tr.Feed([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.n, n)
			assert.Equal(t, tt.done, done)
			require.NoError(t, tr.Finish())
			require.True(t, tr.Done())
			assert.Equal(t, int64(tt.n), tr.Value().End)
		})
	}
}

func TestTrackerErrors(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		strict bool
		is     error
		err    string
	}{
		{name: "colon missing", in: `{"jsonrpc":"2.0","id"}`, is: jsonrpc.ErrSyntax,
			err: "jsonrpc: offset 21: invalid character '}' after object key"},
		{name: "trailing comma in object", in: `{"id":1,}`, is: jsonrpc.ErrSyntax,
			err: "jsonrpc: offset 8: invalid character '}' looking for beginning of object key string"},
		{name: "trailing comma in array", in: `[1,]`, is: jsonrpc.ErrSyntax,
			err: "jsonrpc: offset 3: invalid character ']' looking for beginning of value"},
		{name: "leading zero", in: `[01]`, is: jsonrpc.ErrSyntax,
			err: "jsonrpc: offset 2: invalid character '1' after array element"},
		{name: "missing comma", in: `{"a":1 "b":2}`, is: jsonrpc.ErrSyntax,
			err: `jsonrpc: offset 7: invalid character '"' after object key:value pair`},
		{name: "mismatched closer", in: `{"a":[1}`, is: jsonrpc.ErrSyntax,
			err: "jsonrpc: offset 7: invalid character '}' after array element"},
		{name: "control character in string", in: "{\"a\":\"x\ty\"}", is: jsonrpc.ErrSyntax,
			err: `jsonrpc: offset 7: invalid character '\t' in string literal`},
		{name: "bad escape", in: `"\x"`, is: jsonrpc.ErrSyntax,
			err: "jsonrpc: offset 2: invalid character 'x' in string escape code"},
		{name: "bad hex", in: `"\u00g0"`, is: jsonrpc.ErrSyntax,
			err: `jsonrpc: offset 5: invalid character 'g' in \u hexadecimal character escape`},
		{name: "minus alone", in: `-x`, is: jsonrpc.ErrSyntax,
			err: "jsonrpc: offset 1: invalid character 'x' in numeric literal"},
		{name: "dot without digits", in: `[1.]`, is: jsonrpc.ErrSyntax,
			err: "jsonrpc: offset 3: invalid character ']' after decimal point in numeric literal"},
		{name: "exponent without digits", in: `[1e+]`, is: jsonrpc.ErrSyntax,
			err: "jsonrpc: offset 4: invalid character ']' in exponent of numeric literal"},
		{name: "bad literal", in: `[nul]`, is: jsonrpc.ErrSyntax,
			err: "jsonrpc: offset 4: invalid character ']' in literal null (expecting 'l')"},
		{name: "quote in literal", in: `tr"`, is: jsonrpc.ErrSyntax,
			err: `jsonrpc: offset 2: invalid character '"' in literal true (expecting 'u')`},
		{name: "not a value", in: ` }`, is: jsonrpc.ErrSyntax,
			err: "jsonrpc: offset 1: invalid character '}' looking for beginning of value"},
		{name: "non-ASCII outside strings", in: "[\xc3\xa9]", is: jsonrpc.ErrSyntax,
			err: "jsonrpc: offset 1: invalid character 'Ã' looking for beginning of value"},
		{name: "single quote", in: `{'a':1}`, is: jsonrpc.ErrSyntax,
			err: `jsonrpc: offset 1: invalid character '\'' looking for beginning of object key string`},
		{name: "unexpected end", in: `{"id":1,"params":{`, is: jsonrpc.ErrUnexpectedEOF,
			err: "jsonrpc: offset 18: unexpected end of JSON input"},
		{name: "empty", in: ``, is: jsonrpc.ErrUnexpectedEOF,
			err: "jsonrpc: offset 0: unexpected end of JSON input"},
		{name: "whitespace only", in: " \n", is: jsonrpc.ErrUnexpectedEOF,
			err: "jsonrpc: offset 2: unexpected end of JSON input"},
		{name: "end in escape", in: `"\u12`, is: jsonrpc.ErrUnexpectedEOF,
			err: "jsonrpc: offset 5: unexpected end of JSON input"},
		{name: "invalid UTF-8 is accepted by default", in: "\"\xff\xed\xa0\x80\xc0\xaf\""},
		{name: "strict: bad byte", in: "{\"a\":\"ok\xff\"}", strict: true, is: jsonrpc.ErrInvalidUTF8,
			err: "jsonrpc: offset 8: invalid UTF-8 in string"},
		{name: "strict: surrogate", in: "\"\xed\xa0\x80\"", strict: true, is: jsonrpc.ErrInvalidUTF8,
			err: "jsonrpc: offset 1: invalid UTF-8 in string"},
		{name: "strict: overlong", in: "\"\xc0\xaf\"", strict: true, is: jsonrpc.ErrInvalidUTF8,
			err: "jsonrpc: offset 1: invalid UTF-8 in string"},
		{name: "strict: truncated by the quote", in: "\"ab\xe2\x82\"", strict: true, is: jsonrpc.ErrInvalidUTF8,
			err: "jsonrpc: offset 3: invalid UTF-8 in string"},
		{name: "strict: above U+10FFFF", in: "\"\xf4\x90\x80\x80\"", strict: true, is: jsonrpc.ErrInvalidUTF8,
			err: "jsonrpc: offset 1: invalid UTF-8 in string"},
		{name: "strict: valid", in: "\"é世🌍\xf4\x8f\xbf\xbf\"", strict: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := jsonrpc.NewTracker(jsonrpc.Options{StrictUTF8: tt.strict})
			in := []byte(tt.in)
			o := feed(t, tr, in, nil)
			checkOracle(t, in, o, tt.strict)
			if tt.is == nil {
				require.True(t, o.Done, o.Err)
				return
			}
			require.False(t, o.Done)
			assert.Equal(t, tt.err, o.Err)
			assert.ErrorIs(t, tr.Err(), tt.is)
			for _, other := range []error{jsonrpc.ErrSyntax, jsonrpc.ErrUnexpectedEOF, jsonrpc.ErrDepth, jsonrpc.ErrInvalidUTF8, jsonrpc.ErrDuplicate} {
				if other != tt.is {
					assert.NotErrorIs(t, tr.Err(), other)
				}
			}
		})
	}
}

func TestTrackerDepth(t *testing.T) {
	nest := func(n int) []byte {
		return []byte(strings.Repeat(`{"a":[`, n) + strings.Repeat(`]}`, n))
	}
	t.Run("limit", func(t *testing.T) {
		tr := jsonrpc.NewTracker(jsonrpc.Options{MaxDepth: 4})
		o := feed(t, tr, nest(2), nil)
		require.True(t, o.Done, o.Err)
		o = feed(t, tr, []byte(`{"params":{"a":[{"b":[]}]}}`), nil)
		require.False(t, o.Done)
		assert.Equal(t, "jsonrpc: offset 21: exceeded max depth", o.Err)
		assert.ErrorIs(t, tr.Err(), jsonrpc.ErrDepth)
	})
	t.Run("default is encoding/json's", func(t *testing.T) {
		var tr jsonrpc.Tracker
		in := []byte(strings.Repeat("[", jsonrpc.MaxDepth) + strings.Repeat("]", jsonrpc.MaxDepth))
		o := feed(t, &tr, in, []int{5000, 15000})
		require.True(t, o.Done, o.Err)
		checkOracle(t, in, o, false)
		in = []byte(strings.Repeat("[", jsonrpc.MaxDepth+1) + strings.Repeat("]", jsonrpc.MaxDepth+1))
		o = feed(t, &tr, in, nil)
		require.False(t, o.Done)
		assert.Equal(t, int64(jsonrpc.MaxDepth), o.ErrOff)
		checkOracle(t, in, o, false)
	})
	t.Run("above the maximum means the maximum", func(t *testing.T) {
		tr := jsonrpc.NewTracker(jsonrpc.Options{MaxDepth: 1 << 20})
		in := []byte(strings.Repeat("[", jsonrpc.MaxDepth+1))
		o := feed(t, tr, in, nil)
		assert.Equal(t, int64(jsonrpc.MaxDepth), o.ErrOff)
		assert.ErrorIs(t, tr.Err(), jsonrpc.ErrDepth)
	})
}

func TestTrackerRejectDuplicates(t *testing.T) {
	tr := jsonrpc.NewTracker(jsonrpc.Options{RejectDuplicates: true})
	in := []byte(`{"method":"a","params":{"method":"nested is fine"},"x":1,"x":2,"\u006dethod":"b"}`)
	o := feed(t, tr, in, nil)
	require.False(t, o.Done)
	assert.Equal(t, `jsonrpc: offset 63: duplicate member "method"`, o.Err)
	assert.ErrorIs(t, tr.Err(), jsonrpc.ErrDuplicate)
	assert.Equal(t, `"\u006dethod"`, string(in[o.ErrOff:o.ErrOff+13]))

	// Options survive Reset, and SetOptions replaces them.
	o = feed(t, tr, []byte(`{"id":1,"id":2}`), nil)
	assert.Contains(t, o.Err, `duplicate member "id"`)
	tr.SetOptions(jsonrpc.Options{})
	o = feed(t, tr, []byte(`{"id":1,"id":2}`), nil)
	require.True(t, o.Done)
	assert.Equal(t, jsonrpc.Members(1<<jsonrpc.MemberID), o.Dups)
}

func TestTrackerDuplicateResetsRange(t *testing.T) {
	var tr jsonrpc.Tracker
	in := []byte(`{"params":{},"params":{"a":1}}`)
	_, _, err := tr.Feed(in[:22])
	require.NoError(t, err)
	assert.False(t, tr.ParamsDone(), "the second params has not closed")
	assert.Equal(t, jsonrpc.Range{}, tr.Member(jsonrpc.MemberParams))
	_, done, err := tr.Feed(in[22:])
	require.NoError(t, err)
	require.True(t, done)
	assert.True(t, tr.ParamsDone())
	assert.Equal(t, `{"a":1}`, string(tr.Member(jsonrpc.MemberParams).Bytes(in)))
}

func TestNames(t *testing.T) {
	assert.Equal(t, "params", jsonrpc.MemberParams.String())
	assert.Equal(t, "resultType", jsonrpc.MemberResultType.String())
	assert.Equal(t, "requestState", jsonrpc.MemberRequestState.String())
	assert.Equal(t, "MEMBER_8", jsonrpc.Member(8).String())
	assert.Equal(t, "array", jsonrpc.KindArray.String())
	assert.Equal(t, "KIND_42", jsonrpc.Kind(42).String())
	assert.Equal(t, "number", jsonrpc.IDNumber.String())
	assert.Equal(t, "IDKIND_9", jsonrpc.IDKind(9).String())
	assert.Equal(t, jsonrpc.Range{}, (&jsonrpc.Tracker{}).Member(jsonrpc.Member(8)))
}

func TestRange(t *testing.T) {
	msg := []byte(`{"id":12}`)
	r := jsonrpc.Range{Start: 6, End: 8}
	assert.Equal(t, []byte("12"), r.Bytes(msg))
	assert.Equal(t, int64(2), r.Len())
	assert.Nil(t, r.Bytes(msg[:7]))
	assert.Nil(t, jsonrpc.Range{Start: 6}.Bytes(msg))
	assert.Zero(t, jsonrpc.Range{Start: 6}.Len())
}

func TestTrackerAllocs(t *testing.T) {
	in := []byte(splitMessages[0])
	var tr jsonrpc.Tracker
	allocs := testing.AllocsPerRun(100, func() {
		tr.Reset()
		for k := 0; k < len(in); k += 7 {
			if _, _, err := tr.Feed(in[k:min(k+7, len(in))]); err != nil {
				panic(err)
			}
		}
		if err := tr.Finish(); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
}

func TestSyntaxErrorIs(t *testing.T) {
	var tr jsonrpc.Tracker
	_, _, err := tr.Feed([]byte(`{"a" 1}`))
	var se *jsonrpc.SyntaxError
	require.True(t, errors.As(err, &se))
	assert.Equal(t, int64(5), se.Offset)
	assert.ErrorIs(t, err, jsonrpc.ErrSyntax)
}

func TestTrack(t *testing.T) {
	tests := []struct {
		name, in string
		kind     jsonrpc.Kind
		err      string // "" when valid
	}{
		{name: "object", in: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, kind: jsonrpc.KindObject},
		{name: "whitespace around", in: " \r\n\t[1] \n", kind: jsonrpc.KindArray},
		{name: "bare number", in: `12`, kind: jsonrpc.KindNumber},
		{name: "bare number, then space", in: `-1.5e3 `, kind: jsonrpc.KindNumber},
		{name: "trailing value", in: `{} {}`, err: "jsonrpc: offset 3: invalid character '{' after top-level value"},
		{name: "trailing after a number", in: `1 x`, err: "jsonrpc: offset 2: invalid character 'x' after top-level value"},
		{name: "cut short", in: `{"a":`, err: "jsonrpc: offset 5: unexpected end of JSON input"},
		{name: "empty", in: ``, err: "jsonrpc: offset 0: unexpected end of JSON input"},
		{name: "syntax", in: `{"a" 1}`, err: "jsonrpc: offset 5: invalid character '1' after object key"},
	}
	var tr jsonrpc.Tracker
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr.SetOptions(jsonrpc.Options{StrictUTF8: true}) // a previous message's state is dropped
			err := tr.Track([]byte(tt.in))
			assert.Equal(t, json.Valid([]byte(tt.in)), err == nil, "encoding/json agrees")
			assert.Equal(t, err == nil, jsonrpc.Valid([]byte(tt.in), jsonrpc.Options{}))
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				assert.ErrorIs(t, err, tr.Err())
				assert.False(t, tr.Done())
				return
			}
			require.NoError(t, err)
			assert.True(t, tr.Done())
			assert.Equal(t, tt.kind, tr.Kind())
		})
	}
}

func TestValidOptions(t *testing.T) {
	deep := strings.Repeat("[", 129) + strings.Repeat("]", 129)
	assert.True(t, jsonrpc.Valid([]byte(deep), jsonrpc.Options{}))
	assert.False(t, jsonrpc.Valid([]byte(deep), jsonrpc.Options{MaxDepth: 128}))
	bad := []byte("\"\xff\"")
	assert.True(t, jsonrpc.Valid(bad, jsonrpc.Options{}), "as encoding/json")
	assert.False(t, jsonrpc.Valid(bad, jsonrpc.Options{StrictUTF8: true}))
}

// TestValidAllocs: a valid message costs no allocation, the tracker
// included.
func TestValidAllocs(t *testing.T) {
	msg := toolsList(t)
	var tr jsonrpc.Tracker
	allocs := testing.AllocsPerRun(20, func() {
		if !jsonrpc.Valid(msg, jsonrpc.Options{MaxDepth: 128, StrictUTF8: true}) || tr.Track(msg) != nil {
			t.Fatal("invalid")
		}
	})
	assert.Zero(t, allocs)
}

func TestTrackerKeys(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want []jsonrpc.Key
	}{
		{"none", `{"tools":[{"name":"a","_meta":{},"ttlMs":1}],"nextCursor":"c"}`, nil},
		{"all three", `{"ttlMs":0,"tools":[],"cacheScope":"public","_meta":{"x":1}}`,
			[]jsonrpc.Key{jsonrpc.KeyTTLMs, jsonrpc.KeyCacheScope, jsonrpc.KeyMeta}},
		{"escaped", `{"\u005fmeta":{},"cache\u0053cope":"x"}`, []jsonrpc.Key{jsonrpc.KeyCacheScope, jsonrpc.KeyMeta}},
		{"repeated, no duplicate", `{"_meta":1,"_meta":2}`, []jsonrpc.Key{jsonrpc.KeyMeta}},
		{"inputRequests", `{"resultType":"input_required","inputRequests":{},"requestState":"s"}`, []jsonrpc.Key{jsonrpc.KeyInputRequests}},
		{"near names", `{"_metas":1,"ttlM":2,"cacheScopes":3,"cachescope":4}`, nil},
		{"a string value, not a key", `{"a":"ttlMs","b":["_meta"]}`, nil},
		{"tracked members alongside", `{"resultType":"complete","ttlMs":0}`, []jsonrpc.Key{jsonrpc.KeyTTLMs}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var want jsonrpc.Keys
			for _, k := range tt.want {
				want |= 1 << k
			}
			// Whole, and byte by byte: a key split across chunks is noted too.
			var tr jsonrpc.Tracker
			require.NoError(t, tr.Track([]byte(tt.in)))
			assert.Equal(t, want, tr.Keys())
			tr.Reset()
			for i := range len(tt.in) {
				_, _, err := tr.Feed([]byte(tt.in[i : i+1]))
				require.NoError(t, err)
			}
			assert.True(t, tr.Done())
			assert.Equal(t, want, tr.Keys())
			for k := jsonrpc.KeyTTLMs; k <= jsonrpc.KeyInputRequests; k++ {
				assert.Equal(t, want&(1<<k) != 0, tr.Keys().Has(k), k.String())
			}
			tr.Reset()
			assert.Equal(t, jsonrpc.Keys(0), tr.Keys())
		})
	}
	assert.Equal(t, "cacheScope", jsonrpc.KeyCacheScope.String())
	assert.Equal(t, "KEY_9", jsonrpc.Key(9).String())
}

// TestTrackerKeysTwice: a noted key given twice at the top level is in
// KeysTwice, whole or fed byte by byte, and is no duplicate member, so
// RejectDuplicates takes it.
func TestTrackerKeysTwice(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want jsonrpc.Keys
	}{
		{"once each", `{"_meta":1,"inputRequests":{},"ttlMs":2}`, 0},
		{"inputRequests", `{"inputRequests":{"a":{}},"x":1,"inputRequests":{}}`, 1 << jsonrpc.KeyInputRequests},
		{"escaped", `{"inputRequests":{},"input\u0052equests":{}}`, 1 << jsonrpc.KeyInputRequests},
		{"_meta thrice", `{"_meta":1,"_meta":2,"_meta":3}`, 1 << jsonrpc.KeyMeta},
		{"nested", `{"inputRequests":{"inputRequests":{}},"r":{"inputRequests":1}}`, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := jsonrpc.NewTracker(jsonrpc.Options{RejectDuplicates: true})
			require.NoError(t, tr.Track([]byte(tt.in)))
			assert.Equal(t, tt.want, tr.KeysTwice())
			tr.Reset()
			assert.Zero(t, tr.KeysTwice())
			for i := range len(tt.in) {
				_, _, err := tr.Feed([]byte(tt.in[i : i+1]))
				require.NoError(t, err)
			}
			assert.Equal(t, tt.want, tr.KeysTwice())
		})
	}
}
