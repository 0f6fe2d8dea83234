package spec_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/spec"
)

// parseFile parses testdata/name, failing the test on error.
func parseFile(t *testing.T, name string) *spec.Script {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	s, err := spec.Parse(name, src)
	require.NoError(t, err)
	return s
}

// shape lists a stream as "line:col Type", its head first.
func shape(st *spec.Stream) []string {
	out := []string{fmt.Sprintf("%d:%d %s", st.Line, st.Col, typeName(st.Head))}
	for _, c := range st.Commands {
		p := c.Position()
		out = append(out, fmt.Sprintf("%d:%d %s", p.Line, p.Col, typeName(c)))
	}
	return out
}

func typeName(v any) string { return strings.TrimPrefix(fmt.Sprintf("%T", v), "*spec.") }

// chain flattens a builder chain such as mcp:beginEx().typeId(…).build()
// into its calls, outermost receiver first.
func chain(x spec.Expr) []string {
	var out []string
	for {
		m, ok := x.(*spec.MethodCall)
		if !ok {
			return append([]string{x.String()}, out...)
		}
		args := make([]string, len(m.Args))
		for i, a := range m.Args {
			args[i] = a.String()
		}
		out = append([]string{"." + m.Name + "(" + strings.Join(args, ", ") + ")"}, out...)
		x = m.Receiver
	}
}

func TestParseTestdata(t *testing.T) {
	tests := []struct {
		file       string
		properties []string
		streams    [][]string
	}{
		{
			file:       "mcp_client.rpt",
			properties: []string{`property sessionId "0b5e55ed-5e55-4a11-b0a7-000000000001"`},
			streams: [][]string{{
				"7:1 Connect", "11:1 WriteExt", "19:1 WriteAdvised", "26:1 Connected",
				"28:1 Write", "29:1 WriteClose", "31:1 ReadExt", "38:1 ReadAdvised",
				"46:1 Read", "47:1 ReadClosed",
			}},
		},
		{
			file:       "mcp_server.rpt",
			properties: []string{`property sessionId "0b5e55ed-5e55-4a11-b0a7-000000000001"`},
			streams: [][]string{{
				"5:1 Accept", "9:1 Accepted", "11:1 ReadExt", "20:1 ReadAdvise",
				"27:1 Connected", "29:1 Read", "30:1 ReadClosed", "32:1 WriteExt",
				"38:1 WriteFlush", "40:1 WriteAdvise", "48:1 Write", "49:1 WriteClose",
			}},
		},
		{
			file:       "http_client.rpt",
			properties: []string{`property authorization 0x0001_000000000000L`, `property window ${4096 * 2}`},
			streams: [][]string{{
				"8:1 Connect", "14:1 WriteExt", "16:1 Connected", "18:1 WriteOption",
				"19:1 Write", "20:1 WriteOption", "21:1 Write", "22:1 WriteDataEmpty",
				"23:1 WriteAdvise", "24:1 WriteClose", "26:1 ReadExt", "30:1 ReadOption",
				"31:1 Read", "32:1 ReadExt", "36:1 ReadClosed",
			}},
		},
		{
			file: "http_server.rpt",
			streams: [][]string{{
				"3:1 Accept", "7:1 Accepted", "9:1 ReadExt", "15:1 Connected",
				"17:1 ReadOption", "18:1 Read", "19:1 ReadOption", "20:1 Read",
				"21:1 ReadDataEmpty", "22:1 ReadAdvised", "23:1 ReadClosed",
				"25:1 WriteExt", "29:1 Write", "30:1 WriteExt", "34:1 WriteClose",
			}},
		},
		{
			file:       "tcp_client.rpt",
			properties: []string{`property address "tcp://localhost:8080"`, `property token "s3cr3t"`},
			streams: [][]string{{
				"7:1 Connect", "8:1 Connected", "10:1 Write", "15:1 Read", "18:1 Read",
				"21:1 Write", "25:1 WriteFlush", "27:1 Read", "29:1 Read",
				"32:1 WriteClose", "33:1 ReadClosed",
			}},
		},
		{
			file:       "tcp_server.rpt",
			properties: []string{`property token "s3cr3t"`},
			streams: [][]string{{
				"5:1 Accept", "7:1 Accepted", "8:1 Connected", "10:1 Read", "15:1 Write",
				"20:1 Read", "22:1 Write", "25:1 ReadClosed", "26:1 WriteClose",
			}},
		},
		{
			file: "barrier_client.rpt",
			streams: [][]string{
				{
					"4:1 Connect", "7:1 Connected", "9:1 Write", "10:1 WriteNotify",
					"12:1 Read", "13:1 ReadNotify", "15:1 WriteExt", "16:1 WriteAbort",
					"18:1 ReadExt", "19:1 WriteAborted",
				},
				{"21:1 Connect", "25:1 Connected", "27:1 WriteAwait", "28:1 Write", "29:1 ReadAwait", "30:1 ReadAborted"},
				{"32:1 Connect", "34:1 ConnectAborted"},
			},
		},
		{
			file: "barrier_server.rpt",
			streams: [][]string{
				{
					"3:1 Accept", "7:1 Accepted", "8:1 Connected", "10:1 Read", "11:1 Write",
					"13:1 ReadExt", "14:1 ReadAborted", "16:1 WriteExt", "17:1 ReadAbort",
					"19:1 Accepted", "20:1 Connected", "22:1 Read", "23:1 WriteNotify",
					"24:1 WriteAbort",
				},
				{"26:1 Accept", "28:1 Rejected"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s := parseFile(t, tt.file)
			assert.Equal(t, tt.file, s.File)
			var props []string
			for _, p := range s.Properties {
				props = append(props, p.String())
			}
			assert.Equal(t, tt.properties, props)
			var streams [][]string
			for _, st := range s.Streams {
				streams = append(streams, shape(st))
			}
			assert.Equal(t, tt.streams, streams)
		})
	}
}

func TestParseMCP(t *testing.T) {
	s := parseFile(t, "mcp_client.rpt")
	require.Len(t, s.Streams, 1)
	st := s.Streams[0]

	c := st.Head.(*spec.Connect)
	assert.Equal(t, &spec.Text{Pos: spec.Pos{File: "mcp_client.rpt", Line: 7, Col: 9}, Text: "zilla://streams/app0"}, c.URI)
	require.Len(t, c.Options, 2)
	assert.Equal(t, "zilla:window", c.Options[0].Name)
	assert.Equal(t, &spec.Number{Pos: spec.Pos{File: "mcp_client.rpt", Line: 8, Col: 29}, Kind: spec.NumInt, Lit: "8192", Value: 8192}, c.Options[0].Value)
	assert.Equal(t, "option zilla:transmission \"half-duplex\"", c.Options[1].String())

	begin := st.Commands[0].(*spec.WriteExt)
	assert.Equal(t, "begin", begin.Kind)
	require.Len(t, begin.Values, 1)
	x := begin.Values[0].(*spec.Expression)
	assert.Equal(t, spec.Pos{File: "mcp_client.rpt", Line: 11, Col: 23}, x.Pos)
	assert.True(t, strings.HasPrefix(x.Src, "mcp:beginEx()\n"), "Src keeps the source text: %q", x.Src)
	assert.Equal(t, []string{
		"mcp:beginEx()",
		`.typeId(zilla:id("mcp"))`,
		".toolsCall()",
		".sessionId(sessionId)",
		`.name("get_forecast")`,
		".build()",
		".build()",
	}, chain(x.X))

	// The positions of a chain spread over lines are those of the names.
	outer := x.X.(*spec.MethodCall)
	assert.Equal(t, spec.Pos{File: "mcp_client.rpt", Line: 17, Col: 29}, outer.Pos)
	typeID := outer.Receiver.(*spec.MethodCall).Receiver.(*spec.MethodCall).Receiver.(*spec.MethodCall).Receiver.(*spec.MethodCall).Receiver.(*spec.MethodCall)
	assert.Equal(t, "typeId", typeID.Name)
	assert.Equal(t, spec.Pos{File: "mcp_client.rpt", Line: 12, Col: 29}, typeID.Pos)
	id := typeID.Args[0].(*spec.Call)
	assert.Equal(t, "zilla", id.Namespace)
	assert.Equal(t, "id", id.Name)
	assert.Equal(t, spec.Pos{File: "mcp_client.rpt", Line: 12, Col: 36}, id.Pos)
	assert.Equal(t, []spec.Expr{&spec.Literal{Pos: spec.Pos{File: "mcp_client.rpt", Line: 12, Col: 45}, Kind: spec.LitString, Raw: `"mcp"`, Value: "mcp"}}, id.Args)
	beginEx := typeID.Receiver.(*spec.Call)
	assert.Equal(t, &spec.Call{Pos: spec.Pos{File: "mcp_client.rpt", Line: 11, Col: 25}, Namespace: "mcp", Name: "beginEx", Args: []spec.Expr{}}, beginEx)

	challenge := st.Commands[1].(*spec.WriteAdvised)
	assert.Equal(t, "zilla:challenge", challenge.Kind)
	assert.False(t, challenge.Missing)
	require.Len(t, challenge.Values, 1)
	assert.Equal(t, "mcp:matchChallengeEx()", chain(challenge.Values[0].(*spec.Expression).X)[0])

	flush := st.Commands[6].(*spec.ReadAdvised)
	assert.Equal(t, "zilla:flush", flush.Kind)
	assert.Equal(t, []string{
		"mcp:matchFlushEx()", `.typeId(zilla:id("mcp"))`, ".progress()", ".progress(1)", ".total(2)", ".build()", ".build()",
	}, chain(flush.Values[0].(*spec.Expression).X))

	server := parseFile(t, "mcp_server.rpt").Streams[0]
	advise := server.Commands[2].(*spec.ReadAdvise)
	assert.Equal(t, "zilla:challenge", advise.Kind)
	assert.IsType(t, &spec.Connected{}, server.Commands[3], "the challenge comes before connected")
	assert.Equal(t, "zilla:flush", server.Commands[8].(*spec.WriteAdvise).Kind)
}

func TestParseHTTP(t *testing.T) {
	s := parseFile(t, "http_client.rpt")
	auth := s.Properties[0].Value.(*spec.Number)
	assert.Equal(t, spec.NumLong, auth.Kind)
	assert.Equal(t, int64(0x0001_000000000000), auth.Value)
	window := s.Properties[1].Value.(*spec.Expression)
	assert.Equal(t, &spec.Binary{
		Pos: spec.Pos{File: "http_client.rpt", Line: 6, Col: 24}, Op: "*",
		X: &spec.Literal{Pos: spec.Pos{File: "http_client.rpt", Line: 6, Col: 19}, Kind: spec.LitInt, Raw: "4096", Value: int64(4096)},
		Y: &spec.Literal{Pos: spec.Pos{File: "http_client.rpt", Line: 6, Col: 26}, Kind: spec.LitInt, Raw: "2", Value: int64(2)},
	}, window.X)

	st := s.Streams[0]
	c := st.Head.(*spec.Connect)
	assert.Equal(t, []string{
		"option zilla:window ${window}",
		`option zilla:transmission "duplex"`,
		"option zilla:authorization ${authorization}",
		`option zilla:update "proactive"`,
	}, stringsOf(c.Options))

	begin := st.Commands[0].(*spec.WriteExt)
	assert.Equal(t, []string{
		"http:beginEx()", `.typeId(zilla:id("http"))`, `.header(":method", "POST")`, `.header(":path", "/orders")`,
		`.header("content-type", "application/json")`, ".build()",
	}, chain(begin.Values[0].(*spec.Expression).X))

	assert.Equal(t, &spec.WriteOption{Pos: spec.Pos{File: "http_client.rpt", Line: 18, Col: 1}, Name: "zilla:flags",
		Value: &spec.Text{Pos: spec.Pos{File: "http_client.rpt", Line: 18, Col: 26}, Text: "init"}}, st.Commands[2])
	assert.Equal(t, &spec.WriteDataEmpty{Pos: spec.Pos{File: "http_client.rpt", Line: 22, Col: 1}}, st.Commands[6])
	assert.Equal(t, &spec.WriteAdvise{Pos: spec.Pos{File: "http_client.rpt", Line: 23, Col: 1}, Kind: "zilla:flush"}, st.Commands[7])
	assert.Equal(t, "read option zilla:ack 8", st.Commands[10].String())
	assert.Equal(t, "end", st.Commands[12].(*spec.ReadExt).Kind)

	server := parseFile(t, "http_server.rpt").Streams[0]
	match := server.Commands[1].(*spec.ReadExt)
	assert.Equal(t, "http:matchBeginEx()", chain(match.Values[0].(*spec.Expression).X)[0])
	assert.IsType(t, &spec.ReadDataEmpty{}, server.Commands[7])
	assert.Equal(t, &spec.ReadAdvised{Pos: spec.Pos{File: "http_server.rpt", Line: 22, Col: 1}, Kind: "zilla:flush"}, server.Commands[8])
}

func TestParseTCP(t *testing.T) {
	file := "tcp_client.rpt"
	pos := func(line, col int) spec.Pos { return spec.Pos{File: file, Line: line, Col: col} }
	s := parseFile(t, file)
	st := s.Streams[0]
	assert.Equal(t, &spec.Expression{Pos: pos(7, 9), X: &spec.Ident{Pos: pos(7, 11), Name: "address"}, Src: "address"},
		st.Head.(*spec.Connect).URI)

	request := st.Commands[1].(*spec.Write)
	assert.Equal(t, []spec.Value{
		&spec.Text{Pos: pos(10, 7), Text: "GET /status HTTP/1.1"},
		&spec.Text{Pos: pos(10, 30), Text: "\r\n"},
		&spec.Text{Pos: pos(11, 7), Text: "Host: localhost:8080"},
		&spec.Text{Pos: pos(11, 30), Text: "\r\n"},
		&spec.Text{Pos: pos(12, 7), Text: "X-Token: "},
		&spec.Expression{Pos: pos(12, 19), X: &spec.Ident{Pos: pos(12, 21), Name: "token"}, Src: "token"},
		&spec.Text{Pos: pos(12, 28), Text: "\r\n"},
		&spec.Text{Pos: pos(13, 7), Text: "\r\n"},
	}, request.Values)

	response := st.Commands[2].(*spec.Read)
	assert.Equal(t, []spec.Matcher{
		&spec.Text{Pos: pos(15, 6), Text: "HTTP/1.1 200 OK\r\n"},
		&spec.Regex{Pos: pos(16, 6), Pattern: "Content-Length: (?<length>[0-9]+)", Groups: []string{"length"}},
		&spec.Text{Pos: pos(16, 42), Text: "\r\n"},
		&spec.Text{Pos: pos(17, 6), Text: "\r\n"},
	}, response.Values)
	assert.Equal(t, []spec.Matcher{
		&spec.VariableBytes{Pos: pos(18, 6), Length: &spec.Expression{Pos: pos(18, 10), X: &spec.Ident{Pos: pos(18, 12), Name: "length"}, Src: "length"}},
	}, st.Commands[3].(*spec.Read).Values)

	frame := st.Commands[4].(*spec.Write)
	assert.Equal(t, []spec.Value{
		&spec.Bytes{Pos: pos(21, 7), Bytes: []byte{0x01, 0x02, 0xff}},
		&spec.Number{Pos: pos(22, 7), Kind: spec.NumByte, Lit: "0x7f", Value: 0x7f},
		&spec.Number{Pos: pos(22, 17), Kind: spec.NumShort, Lit: "2", Value: 2},
		&spec.Number{Pos: pos(22, 20), Kind: spec.NumInt, Lit: "6", Value: 6},
		&spec.Number{Pos: pos(22, 26), Kind: spec.NumLong, Lit: "0x0000_0000_0000_0009", Value: 9},
		&spec.Number{Pos: pos(23, 7), Kind: spec.NumShort, Lit: "3", Value: 3},
		&spec.Number{Pos: pos(23, 15), Kind: spec.NumLong, Lit: "7", Value: 7},
		&spec.Number{Pos: pos(23, 18), Kind: spec.NumInt, Lit: "-1", Value: -1},
		&spec.Text{Pos: pos(24, 7), Text: "tunnel"},
	}, frame.Values)

	captures := st.Commands[6].(*spec.Read)
	assert.Equal(t, []spec.Matcher{
		&spec.Bytes{Pos: pos(27, 6), Bytes: []byte{0x01}},
		&spec.NumberCapture{Pos: pos(27, 13), Kind: spec.NumByte, Capture: "flags"},
		&spec.NumberCapture{Pos: pos(27, 26), Kind: spec.NumShort, Capture: "kind"},
		&spec.NumberCapture{Pos: pos(27, 39), Kind: spec.NumInt, Capture: "size"},
		&spec.NumberCapture{Pos: pos(27, 50), Kind: spec.NumLong, Capture: "id"},
		&spec.FixedBytes{Pos: pos(28, 6), Length: 4, Capture: "head"},
		&spec.FixedBytes{Pos: pos(28, 20), Length: 2, Capture: "tail"},
		&spec.VariableBytes{Pos: pos(28, 33), Capture: "rest", Length: &spec.Expression{
			Pos: pos(28, 38), Src: "size - 6",
			X: &spec.Binary{Pos: pos(28, 45), Op: "-",
				X: &spec.Ident{Pos: pos(28, 40), Name: "size"},
				Y: &spec.Literal{Pos: pos(28, 47), Kind: spec.LitInt, Raw: "6", Value: int64(6)}},
		}},
	}, captures.Values)
	assert.Equal(t, "read ${token} [0..2]", st.Commands[7].String())

	server := parseFile(t, "tcp_server.rpt").Streams[0]
	accept := server.Head.(*spec.Accept)
	assert.Equal(t, "LISTENER", accept.As)
	assert.Equal(t, "LISTENING", accept.Notify)
	assert.Equal(t, &spec.Accepted{Pos: spec.Pos{File: "tcp_server.rpt", Line: 7, Col: 1}, Name: "LISTENER"}, server.Commands[0])
	assert.Equal(t, []string{"host"}, server.Commands[2].(*spec.Read).Values[1].(*spec.Regex).Groups)
}

func TestParseBarriers(t *testing.T) {
	s := parseFile(t, "barrier_client.rpt")
	require.Len(t, s.Streams, 3)
	first, second, third := s.Streams[0], s.Streams[1], s.Streams[2]
	assert.Equal(t, "FIRST_SENT", first.Commands[2].(*spec.WriteNotify).Barrier)
	assert.Equal(t, "FIRST_ACKED", first.Commands[4].(*spec.ReadNotify).Barrier)
	assert.Equal(t, "abort", first.Commands[5].(*spec.WriteExt).Kind)
	assert.Equal(t, &spec.ReadExt{Pos: spec.Pos{File: "barrier_client.rpt", Line: 18, Col: 1}, Kind: "reset",
		Values: []spec.Matcher{&spec.Bytes{Pos: spec.Pos{File: "barrier_client.rpt", Line: 18, Col: 22}, Bytes: []byte{0, 1}}}},
		first.Commands[7])

	c := second.Head.(*spec.Connect)
	assert.Equal(t, "FIRST_ACKED", c.Await)
	assert.Equal(t, `connect await FIRST_ACKED "zilla://streams/app0"`+"\n"+
		`    option zilla:window 0`+"\n"+
		`    option zilla:transmission "simplex"`, c.String())
	assert.Equal(t, "FIRST_SENT", second.Commands[1].(*spec.WriteAwait).Barrier)
	assert.Equal(t, "FIRST_ACKED", second.Commands[3].(*spec.ReadAwait).Barrier)

	aborted := third.Commands[0].(*spec.ConnectAborted)
	assert.Equal(t, "reset", aborted.Read.(*spec.ReadExt).Kind)

	server := parseFile(t, "barrier_server.rpt")
	rejected := server.Streams[1].Commands[0].(*spec.Rejected)
	assert.Equal(t, "reset", rejected.Write.(*spec.WriteExt).Kind)
	assert.Equal(t, `rejected zilla:reset.ext ${core:resetEx().typeId(zilla:id("test")).build()}`, rejected.String())
}

func stringsOf[T interface{ String() string }](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}

// TestParseStatements parses one statement at a time (inside a stream where
// needed) and checks what it reads as, printed back.
func TestParseStatements(t *testing.T) {
	const connect = "connect \"zilla://streams/app0\"\n"
	tests := []struct {
		name string
		src  string // a statement of a connect stream
		want string // the command printed, or the script when it starts with connect/accept
		typ  string
	}{
		{name: "write flush", src: "write flush", want: "write flush", typ: "WriteFlush"},
		{name: "write close", src: "write close", want: "write close", typ: "WriteClose"},
		{name: "read closed", src: "read closed", want: "read closed", typ: "ReadClosed"},
		{name: "write abort", src: "write abort", want: "write abort", typ: "WriteAbort"},
		{name: "read aborted", src: "read aborted", want: "read aborted", typ: "ReadAborted"},
		{name: "read abort", src: "read abort", want: "read abort", typ: "ReadAbort"},
		{name: "write aborted", src: "write aborted", want: "write aborted", typ: "WriteAborted"},
		{name: "connect abort", src: "connect abort", want: "connect abort", typ: "ConnectAbort"},
		{name: "connect aborted", src: "connect aborted", want: "connect aborted", typ: "ConnectAborted"},
		{name: "data empty", src: "read zilla:data.empty", want: "read zilla:data.empty", typ: "ReadDataEmpty"},
		{name: "data null", src: "read zilla:data.null", want: "read zilla:data.null", typ: "ReadDataNull"},
		{name: "ext missing", src: "read zilla:begin.ext missing", want: "read zilla:begin.ext missing", typ: "ReadExt"},
		{name: "ext of several values", src: "write zilla:data.ext [0x12 0x34] 12 \"x\"", want: `write zilla:data.ext [0x12 0x34] 12 "x"`, typ: "WriteExt"},
		{name: "ext long matcher", src: "read zilla:begin.ext 0L", want: "read zilla:begin.ext 0L", typ: "ReadExt"},
		{name: "http config", src: `read http:header "Upgrade" /(?i:websocket)/`, want: `read http:header "Upgrade" /(?i:websocket)/`, typ: "ReadConfig"},
		{name: "http config missing", src: `read http:header "Host" missing`, want: `read http:header "Host" missing`, typ: "ReadConfig"},
		{name: "http write config", src: `write http:content-length`, want: `write http:content-length`, typ: "WriteConfig"},
		{name: "mask option", src: "write option mask [0x01 0x02 0x03 0x04]", want: "write option mask [0x01 0x02 0x03 0x04]", typ: "WriteOption"},
		{name: "redirect advise", src: "read advise zilla:redirect 0x01L", want: "read advise zilla:redirect 0x01L", typ: "ReadAdvise"},
		{name: "redirect advised", src: "write advised zilla:redirect 0x0000000000000001L", want: "write advised zilla:redirect 0x0000000000000001L", typ: "WriteAdvised"},
		{name: "close", src: "close", want: "close", typ: "Close"},
		{name: "advised missing", src: "write advised zilla:challenge missing", want: "write advised zilla:challenge missing", typ: "WriteAdvised"},
		{name: "single quotes and escapes", src: `write 'a"b' "c\'d\t\\\b\f"`, want: `write "a\"b" "c'd\t\\\b\f"`, typ: "Write"},
		{name: "number keywords", src: "write byte -128 short 0x7fff int +1 long -9223372036854775808", want: "write byte -128 0x7fffs +1 -9223372036854775808L", typ: "Write"},
		{name: "octal as in Java", src: "write 010", want: "write 010", typ: "Write"},
		{name: "number matchers", src: "read byte 0x01 short 2 2s int 3 long 4 4L", want: "read byte 0x01 2s 2s 3 4L 4L", typ: "Read"},
		{name: "bytes with spaces", src: "read [ 0x01  0x02 ]", want: "read [0x01 0x02]", typ: "Read"},
		{name: "repeat capture", src: "read [(:x){3}]", want: "read ([0..3]:x)", typ: "Read"},
		{name: "capture with space", src: "read ([0..4] :mask)", want: "read ([0..4]:mask)", typ: "Read"},
		{name: "regex with escaped slash", src: `read /a\/b(?<x>c)/`, want: `read /a\/b(?<x>c)/`, typ: "Read"},
		{name: "java regex lookahead", src: `read http:status /(?!101)/`, want: `read http:status /(?!101)/`, typ: "ReadConfig"},
		{name: "comment after keyword", src: "read closed# done", want: "read closed", typ: "ReadClosed"},
		{name: "statement over lines", src: "write\n  \"a\" # first\n  # between\n  \"b\"", want: `write "a" "b"`, typ: "Write"},
		{name: "unicode text", src: "write \"72°F\"", want: "write \"72°F\"", typ: "Write"},
		{name: "barrier names", src: "read notify SEND-2_$x", want: "read notify SEND-2_$x", typ: "ReadNotify"},
		{name: "disconnected", src: "disconnected", want: "disconnected", typ: "Disconnected"},
		{name: "closed", src: "closed", want: "closed", typ: "Closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := spec.Parse("t.rpt", []byte(connect+tt.src+"\n"))
			require.NoError(t, err)
			require.Len(t, s.Streams, 1)
			require.Len(t, s.Streams[0].Commands, 1)
			cmd := s.Streams[0].Commands[0]
			assert.Equal(t, tt.want, cmd.String())
			assert.Equal(t, tt.typ, typeName(cmd))
			assert.Equal(t, spec.Pos{File: "t.rpt", Line: 2, Col: 1}, cmd.Position())
		})
	}
}

// TestParseStreams checks how streams, accepted blocks and properties fit
// together.
func TestParseStreams(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // the script printed
	}{
		{
			name: "accept as name picks up a later accepted",
			src: "accept \"zilla://streams/a\" as A\n" +
				"accept \"zilla://streams/b\"\n" +
				"accepted A\nconnected\n" +
				"accepted\nconnected\n",
			want: "accept \"zilla://streams/a\" as A\n\naccepted A\nconnected\n\n" +
				"accept \"zilla://streams/b\"\n\naccepted\nconnected\n",
		},
		{
			name: "accepted after a connect belongs to the latest accept",
			src: "accept \"zilla://streams/a\"\naccepted\nconnected\n" +
				"connect \"zilla://streams/b\"\nconnected\n" +
				"accepted\nread closed\n",
			want: "accept \"zilla://streams/a\"\n\naccepted\nconnected\n\naccepted\nread closed\n\n" +
				"connect \"zilla://streams/b\"\nconnected\n",
		},
		{
			name: "server events between accept and accepted",
			src: "accept await READY \"tcp://localhost:1\"\n  option tls:transport \"x\"\n" +
				"write notify BOUND\nopened\nbound\nchild opened\nchild closed\nunbind\nclose\nunbound\nclosed\n" +
				"write option mask [0x01]\n",
			want: "accept await READY \"tcp://localhost:1\"\n    option tls:transport \"x\"\n" +
				"write notify BOUND\nopened\nbound\nchild opened\nchild closed\nunbind\nclose\nunbound\nclosed\n" +
				"write option mask [0x01]\n",
		},
		{
			name: "rejected with barriers and a read",
			src:  "accept \"zilla://streams/a\"\nrejected\nread notify REJECTED\nread zilla:begin.ext [0x01]\n",
			want: "accept \"zilla://streams/a\"\n\nrejected\nread notify REJECTED\nread zilla:begin.ext [0x01]\n",
		},
		{
			name: "properties between streams",
			src:  "property a 1\nconnect \"tcp://x:1\"\nconnected\nproperty b \"two\"\n",
			want: "property a 1\nproperty b \"two\"\n\nconnect \"tcp://x:1\"\nconnected\n",
		},
		{
			name: "empty script",
			src:  "# nothing but a comment, without a final newline",
			want: "",
		},
		{
			name: "CRLF line ends",
			src:  "connect \"tcp://x:1\"\r\nconnected\r\nread \"a\"\r\n",
			want: "connect \"tcp://x:1\"\nconnected\nread \"a\"\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := spec.Parse("t.rpt", []byte(tt.src))
			require.NoError(t, err)
			assert.Equal(t, tt.want, s.String())
		})
	}
}

// TestRoundTrip prints each testdata script and parses the result: it must
// print the same again.
func TestRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.rpt"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			s := parseFile(t, filepath.Base(path))
			printed := s.String()
			again, err := spec.Parse("printed.rpt", []byte(printed))
			require.NoError(t, err, printed)
			assert.Equal(t, printed, again.String())
		})
	}
}
