package dynamic_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// chain evaluates a k3po-style method chain, as a script would write it
// after "mcp:beginEx()":
//
//	typeId(3).toolsCall().sessionId("s").build().build()
//
// Arguments are integers (42, -1, 0x7f; 1000L is an int64), strings with
// Go escapes, null, and bytes [0x01 0x02]. It returns the result of the
// last call.
func chain(t testing.TB, c caller, src string) (any, error) {
	t.Helper()
	calls, err := parseChain(src)
	require.NoError(t, err, "test chain %q", src)
	var res any = c
	for i, cl := range calls {
		next, ok := res.(caller)
		require.Truef(t, ok, "call %d (%s) of %q: %T has no methods", i, cl.name, src, res)
		if res, err = next.Call(cl.name, cl.args...); err != nil {
			return nil, err
		}
	}
	return res, nil
}

type parsedCall struct {
	name string
	args []any
}

func parseChain(src string) ([]parsedCall, error) {
	var calls []parsedCall
	p := &chainParser{s: src}
	for {
		p.space()
		if p.i == len(p.s) {
			return calls, nil
		}
		if len(calls) > 0 {
			if !p.eat('.') {
				return nil, p.errorf("want '.'")
			}
			p.space()
		}
		start := p.i
		for p.i < len(p.s) && (isLetter(p.s[p.i]) || p.i > start && p.s[p.i] >= '0' && p.s[p.i] <= '9') {
			p.i++
		}
		if p.i == start {
			return nil, p.errorf("want a method name")
		}
		c := parsedCall{name: p.s[start:p.i]}
		if !p.eat('(') {
			return nil, p.errorf("want '('")
		}
		for p.space(); !p.eat(')'); p.space() {
			if len(c.args) > 0 && !p.eat(',') {
				return nil, p.errorf("want ',' or ')'")
			}
			p.space()
			a, err := p.arg()
			if err != nil {
				return nil, err
			}
			c.args = append(c.args, a)
		}
		if c.args == nil {
			c.args = []any{}
		}
		calls = append(calls, c)
	}
}

type chainParser struct {
	s string
	i int
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

func (p *chainParser) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *chainParser) space() {
	for p.i < len(p.s) && strings.ContainsRune(" \t\r\n", rune(p.s[p.i])) {
		p.i++
	}
}

func (p *chainParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *chainParser) arg() (any, error) {
	rest := p.s[p.i:]
	switch {
	case strings.HasPrefix(rest, "null"):
		p.i += 4
		return nil, nil
	case strings.HasPrefix(rest, `"`):
		end := 1
		for end < len(rest) && rest[end] != '"' {
			if rest[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(rest) {
			return nil, p.errorf("unterminated string")
		}
		p.i += end + 1
		return strconv.Unquote(rest[:end+1])
	case strings.HasPrefix(rest, "["):
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return nil, p.errorf("unterminated bytes")
		}
		p.i += end + 1
		b := []byte{}
		for _, f := range strings.Fields(rest[1:end]) {
			v, err := strconv.ParseUint(f, 0, 8)
			if err != nil {
				return nil, p.errorf("bad byte %q", f)
			}
			b = append(b, byte(v))
		}
		return b, nil
	}
	end := 0
	for end < len(rest) && strings.IndexByte("-+0123456789abcdefxABCDEFX_", rest[end]) >= 0 {
		end++
	}
	long := end < len(rest) && (rest[end] == 'L' || rest[end] == 'l')
	lit := rest[:end]
	p.i += end
	if long {
		p.i++
	}
	if v, err := strconv.ParseInt(lit, 0, 64); err == nil {
		if long {
			return v, nil
		}
		return int(v), nil
	}
	v, err := strconv.ParseUint(lit, 0, 64)
	if err != nil {
		return nil, p.errorf("bad argument %q", lit)
	}
	return v, nil
}

func TestParseChain(t *testing.T) {
	calls, err := parseChain(`typeId(42)
		.toolsCall()
		  .name("a\"b", null, -1, 1000L, [0x01 0xff], 0x7f, 18446744073709551615)
		.build()`)
	require.NoError(t, err)
	require.Equal(t, []parsedCall{
		{"typeId", []any{42}},
		{"toolsCall", []any{}},
		{"name", []any{`a"b`, nil, -1, int64(1000), []byte{1, 0xff}, 0x7f, uint64(18446744073709551615)}},
		{"build", []any{}},
	}, calls)
}
