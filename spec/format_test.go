package spec_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/spec"
)

func TestExcerpt(t *testing.T) {
	src := []byte("connect \"zilla://streams/echo0\"\r\nconnected\nwrite \"hello\"\nread \"hello\"\nwrite close\nread closed\n" +
		"\n\n\n\n# line 11\n")
	tests := []struct {
		name    string
		src     []byte
		line    int
		context int
		want    string
	}{
		{name: "middle", src: src, line: 3, context: 1, want: "" +
			"  2 | connected\n" +
			"> 3 | write \"hello\"\n" +
			"  4 | read \"hello\"\n"},
		{name: "first line drops CR", src: src, line: 1, context: 1, want: "" +
			"> 1 | connect \"zilla://streams/echo0\"\n" +
			"  2 | connected\n"},
		{name: "width grows with line numbers", src: src, line: 10, context: 1, want: "" +
			"   9 | \n" +
			"> 10 | \n" +
			"  11 | # line 11\n"},
		{name: "no context", src: src, line: 4, context: 0, want: "> 4 | read \"hello\"\n"},
		{name: "negative context", src: src, line: 4, context: -3, want: "> 4 | read \"hello\"\n"},
		{name: "past the end shows the last lines", src: src, line: 40, context: 1, want: "" +
			"  10 | \n" +
			"  11 | # line 11\n"},
		{name: "end of file after the final newline", src: []byte("a\nb\n"), line: 3, context: 1, want: "" +
			"  2 | b\n" +
			"> 3 | \n"},
		{name: "line zero", src: []byte("a\nb\n"), line: 0, context: 0, want: "  1 | a\n"},
		{name: "no final newline", src: []byte("a\nb"), line: 2, context: 5, want: "  1 | a\n> 2 | b\n"},
		{name: "empty source", src: nil, line: 1, context: 1, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, spec.Excerpt(tt.src, tt.line, tt.context))
		})
	}
}

// TestExcerptOfError shows how a runner reports a parse error: the
// position's line marked in the source.
func TestExcerptOfError(t *testing.T) {
	src := []byte("connect \"zilla://streams/app0\"\nconnected\nwrite zilla:begin.ext ${mcp:beginEx()\n  .typeId(zilla:id(\"mcp\")\n  .build()}\n")
	_, err := spec.Parse("client.rpt", src)
	require.Error(t, err)
	list := err.(spec.ErrorList)
	assert.Equal(t, `client.rpt:5:11: expected "," or ")" in the arguments, found "}"`, list[0].Error())
	assert.Equal(t, ""+
		"  4 |   .typeId(zilla:id(\"mcp\")\n"+
		"> 5 |   .build()}\n", spec.Excerpt(src, list[0].Pos.Line, 1))
}
