package spec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/spec"
)

// TestParseDropsStrayCharacters checks that characters no token of k3po's
// grammar can begin are dropped with a warning, as k3po's lexer does.
func TestParseDropsStrayCharacters(t *testing.T) {
	src := "connect \"tcp://localhost:1\"\nconnected\nread [0...4]\nwrite \"a\" @ \"b\" ( [0x01]\n"
	s, err := spec.Parse("t.rpt", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, "connect \"tcp://localhost:1\"\nconnected\nread [0..4]\nwrite \"a\" \"b\" [0x01]\n", s.String())
	assert.Equal(t, "t.rpt:3:10: dropped unexpected character '.', as k3po does\n"+
		"t.rpt:4:11: dropped unexpected character '@', as k3po does\n"+
		"t.rpt:4:17: dropped unexpected character '(', as k3po does", s.Warnings.Error())
}

// TestParseErrors checks that each broken script fails at the right
// file:line:col with a message naming what was expected and found.
func TestParseErrors(t *testing.T) {
	const (
		zc = "connect \"zilla://streams/app0\"\n" // a connect line, so the error is on line 2
		za = "accept \"zilla://streams/app0\"\n"
	)
	tests := []struct {
		name string
		src  string
		pos  string // file:line:col
		msg  string // a substring of the message
	}{
		{name: "read outside a stream", src: "read \"x\"\n", pos: "t.rpt:1:1",
			msg: `expected property, connect, accept, accepted or rejected, found "read"`},
		{name: "connect without a URI", src: "connect\nconnected\n", pos: "t.rpt:2:1",
			msg: `expected a URI (text or ${…}) after "connect", found "connected"`},
		{name: "connect without commands", src: zc, pos: "t.rpt:2:1",
			msg: `expected a command after "connect", found end of file`},
		{name: "connect followed by connect", src: zc + "connect \"zilla://streams/app1\"\nconnected\n", pos: "t.rpt:2:1",
			msg: `expected a command after "connect", found "connect"`},
		{name: "accepted without a command", src: za + "accepted\n", pos: "t.rpt:3:1",
			msg: `expected a command after "accepted", found end of file`},
		{name: "accepted without an accept", src: "accepted\nconnected\n", pos: "t.rpt:1:1",
			msg: "expected an accept before accepted, found none"},
		{name: "accepted naming an unknown accept", src: "accept \"tcp://localhost:1\" as A\naccepted B\nconnected\n", pos: "t.rpt:2:1",
			msg: `expected an accept declared "as B" before accepted, found none`},
		{name: "data before accepted", src: za + "read \"x\"\n", pos: "t.rpt:2:1",
			msg: `expected accepted, found "read" (only barriers, options and server events may come between accept and accepted)`},
		{name: "connected before accepted", src: za + "connected\n", pos: "t.rpt:2:1",
			msg: `expected accepted, found "connected"`},
		{name: "child event in a connect", src: zc + "child opened\n", pos: "t.rpt:2:1",
			msg: `expected a command of a connected stream, found "child opened"`},
		{name: "child without opened or closed", src: za + "child bound\n", pos: "t.rpt:2:7",
			msg: `expected opened or closed after "child", found "bound"`},
		{name: "write after rejected", src: za + "rejected\nwrite \"x\"\n", pos: "t.rpt:3:1",
			msg: `expected a barrier or read ns:name after rejected, found "write"`},
		{name: "malformed URI", src: "connect \"zilla://streams/%zz\"\nconnected\n", pos: "t.rpt:1:9",
			msg: `malformed URI "zilla://streams/%zz"`},
		{name: "unterminated text", src: zc + "write \"abc\nconnected\n", pos: "t.rpt:2:7",
			msg: "text literal not terminated before the end of the line"},
		{name: "empty text", src: zc + "write \"\"\n", pos: "t.rpt:2:7",
			msg: "empty text literal"},
		{name: "unknown escape", src: zc + "write \"a\\x41\"\n", pos: "t.rpt:2:9",
			msg: `unknown escape sequence \x in text`},
		{name: "short hex byte", src: zc + "write [0x01 0x1]\n", pos: "t.rpt:2:13",
			msg: `expected a byte 0xHH or "]" in byte literal, found "0x1"`},
		{name: "empty bytes", src: zc + "write []\n", pos: "t.rpt:2:7",
			msg: "empty byte literal"},
		{name: "lone sign", src: zc + "write - 1\n", pos: "t.rpt:2:7",
			msg: "unexpected '-'; a sign must be followed by digits"},
		{name: "only stray characters after write", src: zc + "write @;\n", pos: "t.rpt:3:1",
			msg: `after "write", found end of file`},
		{name: "misspelt capture kind", src: zc + "read (bytes:x)\n", pos: "t.rpt:2:6",
			msg: `expected (byte:, (short:, (int: or (long:, found "(bytes"`},
		{name: "read of nothing", src: zc + "read\nconnected\n", pos: "t.rpt:3:1",
			msg: `expected a matcher, closed, abort, aborted, option, advise, advised, notify, await or ns:name after "read", found "connected"`},
		{name: "write of nothing", src: zc + "write\n", pos: "t.rpt:3:1",
			msg: `after "write", found end of file`},
		{name: "misspelt zilla option", src: zc + "  option zilla:windw 8192\nconnected\n", pos: "t.rpt:2:10",
			msg: `expected one of the zilla options zilla:affinity, zilla:alignment, zilla:authorization, zilla:budgetId, zilla:byteorder, zilla:capabilities, zilla:ephemeral, `},
		{name: "connect-only option on accept", src: za + "  option zilla:ephemeral \"x\"\naccepted\nconnected\n", pos: "t.rpt:2:10",
			msg: `after "accept", found "zilla:ephemeral"`},
		{name: "unqualified connect option", src: zc + "  option window 8192\nconnected\n", pos: "t.rpt:2:10",
			msg: `expected a qualified option name such as zilla:window after "connect", found name "window"`},
		{name: "option without a value", src: zc + "  option zilla:window\nconnected\n", pos: "t.rpt:3:1",
			msg: `expected a value for option zilla:window (text, bytes, number or ${…}), found "connected"`},
		{name: "write-only option read", src: zc + "write option zilla:ack 1\n", pos: "t.rpt:2:14",
			msg: `expected one of the zilla options zilla:flags after "write option", found "zilla:ack"`},
		{name: "misspelt zilla config", src: zc + "read zilla:begin.ex [0x01]\n", pos: "t.rpt:2:6",
			msg: `expected zilla:abort.ext, zilla:begin.ext, zilla:data.empty, zilla:data.ext, zilla:data.null, zilla:end.ext or zilla:reset.ext after "read", found "zilla:begin.ex"`},
		{name: "data.null is read only", src: zc + "write zilla:data.null\n", pos: "t.rpt:2:7",
			msg: `expected zilla:abort.ext, zilla:begin.ext, zilla:data.empty, zilla:data.ext, zilla:end.ext or zilla:reset.ext after "write", found "zilla:data.null"`},
		{name: "misspelt config after connect aborted", src: zc + "connect aborted zilla:reset.ex [0x01]\n", pos: "t.rpt:2:17",
			msg: `after "connect aborted", found "zilla:reset.ex"`},
		{name: "misspelt config after rejected", src: za + "rejected zilla:rest.ext [0x01]\n", pos: "t.rpt:2:10",
			msg: `after "rejected", found "zilla:rest.ext"`},
		{name: "data.empty with a value", src: zc + "write zilla:data.empty \"x\"\n", pos: "t.rpt:2:24",
			msg: `expected nothing after zilla:data.empty, found text "\"x\""`},
		{name: "challenge advised on the wrong side", src: zc + "read advised zilla:challenge\n", pos: "t.rpt:2:14",
			msg: `expected zilla:flush after "read advised", found "zilla:challenge"`},
		{name: "flush advise on the wrong side", src: zc + "read advise zilla:flush\n", pos: "t.rpt:2:13",
			msg: `expected zilla:challenge or zilla:redirect after "read advise", found "zilla:flush"`},
		{name: "advise without a kind", src: zc + "write advise ${x}\n", pos: "t.rpt:2:14",
			msg: `expected an advisory such as zilla:flush after "write advise", found expression "${x}"`},
		{name: "quoted barrier", src: zc + "read notify \"READY\"\n", pos: "t.rpt:2:13",
			msg: `expected a name after "read notify", found text "\"READY\""`},
		{name: "keyword as barrier", src: zc + "write await connected\n", pos: "t.rpt:2:13",
			msg: `expected a name after "write await", found "connected"`},
		{name: "property without a name", src: "property 1 2\n", pos: "t.rpt:1:10",
			msg: `expected a name after "property", found number 1`},
		{name: "property without a value", src: "property a\n", pos: "t.rpt:2:1",
			msg: `expected a value for property a (text, bytes, number or ${…}), found end of file`},
		{name: "byte out of range", src: zc + "write byte 0xff\n", pos: "t.rpt:2:12",
			msg: "number 0xff is out of range for byte"},
		{name: "int out of range", src: zc + "write 0xffffffff\n", pos: "t.rpt:2:7",
			msg: "number 0xffffffff is out of range for int"},
		{name: "malformed octal", src: zc + "write 09\n", pos: "t.rpt:2:7",
			msg: "malformed number 09 (a leading 0 means octal, as in Java)"},
		{name: "suffix against keyword", src: zc + "write short 1L\n", pos: "t.rpt:2:13",
			msg: "expected a short, found suffix L on number 1"},
		{name: "keyword without a number", src: zc + "write long \"x\"\n", pos: "t.rpt:2:12",
			msg: `expected a number after "long", found text "\"x\""`},
		{name: "fixed length of a name", src: zc + "read [0..x]\n", pos: "t.rpt:2:10",
			msg: `expected a decimal length or ${…} after "[0..", found name "x"`},
		{name: "fixed length out of range", src: zc + "read [0..99999999999]\n", pos: "t.rpt:2:10",
			msg: "length 99999999999 is out of range"},
		{name: "capture without a name", src: zc + "read ([0..4])\n", pos: "t.rpt:2:13",
			msg: `expected a capture :name, found ")"`},
		{name: "unclosed fixed length", src: zc + "read [0..4 \"x\"\n", pos: "t.rpt:2:12",
			msg: `expected "]", found text "\"x\""`},
		{name: "regex with an open group", src: zc + "read /a(b/\n", pos: "t.rpt:2:8",
			msg: "malformed regex /a(b/: missing ) to close the group"},
		{name: "regex with an unnamed group among named", src: zc + "read /(?<a>x)(y)/\n", pos: "t.rpt:2:6",
			msg: "expected every group of regex /(?<a>x)(y)/ to be named once one is, found 2 groups and 1 names"},
		{name: "regex across lines", src: zc + "read /abc\n/\n", pos: "t.rpt:2:6",
			msg: "regex not terminated before the end of the line"},
		{name: "empty expression", src: zc + "write ${}\n", pos: "t.rpt:2:9",
			msg: "empty expression ${}"},
		{name: "unterminated expression", src: zc + "write ${foo(\n", pos: "t.rpt:3:1",
			msg: "expected } to end the expression, found end of file"},
		{name: "error inside a multi-line builder", src: zc + "write zilla:begin.ext ${mcp:beginEx()\n    .typeId(zilla:id(\"mcp\"))\n    .build(}\nconnected\n", pos: "t.rpt:4:12",
			msg: `expected an expression, found "}"`},
		{name: "missing comma", src: zc + "write ${http:header(\":method\" \"GET\")}\n", pos: "t.rpt:2:31",
			msg: `expected "," or ")" in the arguments, found string "\"GET\""`},
		{name: "unterminated string in an expression", src: zc + "write ${f(\"abc)}\n", pos: "t.rpt:2:11",
			msg: "string literal not terminated"},
		{name: "reserved word", src: zc + "write ${and}\n", pos: "t.rpt:2:9",
			msg: `expected an expression, found reserved word "and"`},
		{name: "dangling dot", src: zc + "write ${a.}\n", pos: "t.rpt:2:11",
			msg: `expected a property or method name after ".", found "}"`},
		{name: "operator without an operand", src: zc + "write ${1 +}\n", pos: "t.rpt:2:12",
			msg: `expected an expression, found "}"`},
		{name: "two expressions", src: zc + "write ${a b}\n", pos: "t.rpt:2:11",
			msg: `expected an operator or the end of the expression, found identifier "b"`},
		{name: "function without arguments", src: zc + "write ${zilla:id}\n", pos: "t.rpt:2:17",
			msg: `expected "(" after function zilla:id, found "}"`},
		{name: "unknown character in an expression", src: zc + "write ${a # b}\n", pos: "t.rpt:2:11",
			msg: "expected an expression, found '#'"},
		{name: "expression nested too deep", src: zc + "write ${" + strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100) + "}\n", pos: "t.rpt:2:73",
			msg: "expression nested more than 64 deep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := spec.Parse("t.rpt", []byte(tt.src))
			require.Error(t, err)
			assert.Nil(t, s)
			var list spec.ErrorList
			require.True(t, errors.As(err, &list), "error is a spec.ErrorList: %#v", err)
			require.Len(t, list, 1)
			assert.Equal(t, tt.pos, list[0].Pos.String())
			assert.True(t, strings.HasPrefix(err.Error(), tt.pos+": "), "error %q starts with %q", err.Error(), tt.pos)
			assert.Contains(t, list[0].Msg, tt.msg)
		})
	}
}
