package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// String prints the script in k3po syntax: properties first, then each
// stream with its options indented and one command a line. Expressions are
// printed on one line and comments are dropped, so line numbers differ from
// the source; use [Excerpt] to show the source itself. Parsing the output
// gives the same script again, positions aside.
func (s *Script) String() string {
	var b strings.Builder
	for _, p := range s.Properties {
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	for i, st := range s.Streams {
		if i > 0 || len(s.Properties) > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(st.String())
	}
	return b.String()
}

// String prints the stream, ending with a newline.
func (s *Stream) String() string {
	var b strings.Builder
	if s.Head != nil {
		b.WriteString(s.Head.String())
		b.WriteByte('\n')
	}
	for _, c := range s.Commands {
		switch c.(type) {
		case *Accepted, *Rejected:
			b.WriteByte('\n')
		}
		b.WriteString(c.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// String prints `property name value`.
func (p *Property) String() string { return "property " + p.Name + " " + p.Value.String() }

// String prints `option name value`.
func (o *Option) String() string { return "option " + o.Name + " " + o.Value.String() }

func writeOptions(b *strings.Builder, opts []*Option) {
	for _, o := range opts {
		b.WriteString("\n    ")
		b.WriteString(o.String())
	}
}

// String prints the connect line and its options, one a line.
func (c *Connect) String() string {
	var b strings.Builder
	b.WriteString("connect ")
	if c.Await != "" {
		b.WriteString("await " + c.Await + " ")
	}
	b.WriteString(nodeString(c.URI))
	writeOptions(&b, c.Options)
	return b.String()
}

// String prints the accept line and its options, one a line.
func (a *Accept) String() string {
	var b strings.Builder
	b.WriteString("accept ")
	if a.Await != "" {
		b.WriteString("await " + a.Await + " ")
	}
	b.WriteString(nodeString(a.URI))
	if a.As != "" {
		b.WriteString(" as " + a.As)
	}
	if a.Notify != "" {
		b.WriteString(" notify " + a.Notify)
	}
	writeOptions(&b, a.Options)
	return b.String()
}

func nodeString(n interface{ String() string }) string {
	if n == nil {
		return "<nil>"
	}
	return n.String()
}

func withName(kw, name string) string {
	if name == "" {
		return kw
	}
	return kw + " " + name
}

func valuesString(prefix string, vs []Value) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, v := range vs {
		b.WriteByte(' ')
		b.WriteString(nodeString(v))
	}
	return b.String()
}

func matchersString(prefix string, ms []Matcher, missing bool) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, m := range ms {
		b.WriteByte(' ')
		b.WriteString(nodeString(m))
	}
	if missing {
		b.WriteString(" missing")
	}
	return b.String()
}

// String prints the statement in k3po syntax.
func (c *Accepted) String() string { return withName("accepted", c.Name) }

// String prints the statement in k3po syntax.
func (c *Rejected) String() string {
	s := withName("rejected", c.Name)
	if c.Write != nil {
		s += " " + strings.TrimPrefix(c.Write.String(), "write ")
	}
	return s
}

// String prints the statement in k3po syntax.
func (*Connected) String() string { return "connected" }

// String prints the statement in k3po syntax.
func (*Opened) String() string { return "opened" }

// String prints the statement in k3po syntax.
func (*Bound) String() string { return "bound" }

// String prints the statement in k3po syntax.
func (*Unbound) String() string { return "unbound" }

// String prints the statement in k3po syntax.
func (*Closed) String() string { return "closed" }

// String prints the statement in k3po syntax.
func (*Close) String() string { return "close" }

// String prints the statement in k3po syntax.
func (*Unbind) String() string { return "unbind" }

// String prints the statement in k3po syntax.
func (*Disconnected) String() string { return "disconnected" }

// String prints the statement in k3po syntax.
func (*ChildOpened) String() string { return "child opened" }

// String prints the statement in k3po syntax.
func (*ChildClosed) String() string { return "child closed" }

// String prints the statement in k3po syntax.
func (*ConnectAbort) String() string { return "connect abort" }

// String prints the statement in k3po syntax.
func (c *ConnectAborted) String() string {
	if c.Read != nil {
		return "connect aborted " + strings.TrimPrefix(c.Read.String(), "read ")
	}
	return "connect aborted"
}

// String prints the statement in k3po syntax.
func (c *Read) String() string { return matchersString("read", c.Values, false) }

// String prints the statement in k3po syntax.
func (c *Write) String() string { return valuesString("write", c.Values) }

// String prints the statement in k3po syntax.
func (*WriteFlush) String() string { return "write flush" }

// String prints the statement in k3po syntax.
func (*WriteClose) String() string { return "write close" }

// String prints the statement in k3po syntax.
func (*ReadClosed) String() string { return "read closed" }

// String prints the statement in k3po syntax.
func (*WriteAbort) String() string { return "write abort" }

// String prints the statement in k3po syntax.
func (*ReadAborted) String() string { return "read aborted" }

// String prints the statement in k3po syntax.
func (*ReadAbort) String() string { return "read abort" }

// String prints the statement in k3po syntax.
func (*WriteAborted) String() string { return "write aborted" }

// String prints the statement in k3po syntax.
func (c *ReadExt) String() string {
	return matchersString("read zilla:"+c.Kind+".ext", c.Values, c.Missing)
}

// String prints the statement in k3po syntax.
func (c *WriteExt) String() string { return valuesString("write zilla:"+c.Kind+".ext", c.Values) }

// String prints the statement in k3po syntax.
func (*WriteDataEmpty) String() string { return "write zilla:data.empty" }

// String prints the statement in k3po syntax.
func (*ReadDataEmpty) String() string { return "read zilla:data.empty" }

// String prints the statement in k3po syntax.
func (*ReadDataNull) String() string { return "read zilla:data.null" }

// String prints the statement in k3po syntax.
func (c *ReadConfig) String() string { return matchersString("read "+c.Name, c.Values, c.Missing) }

// String prints the statement in k3po syntax.
func (c *WriteConfig) String() string { return valuesString("write "+c.Name, c.Values) }

// String prints the statement in k3po syntax.
func (c *ReadOption) String() string { return "read option " + c.Name + " " + nodeString(c.Value) }

// String prints the statement in k3po syntax.
func (c *WriteOption) String() string { return "write option " + c.Name + " " + nodeString(c.Value) }

// String prints the statement in k3po syntax.
func (c *WriteAdvise) String() string { return valuesString("write advise "+c.Kind, c.Values) }

// String prints the statement in k3po syntax.
func (c *ReadAdvised) String() string {
	return matchersString("read advised "+c.Kind, c.Values, c.Missing)
}

// String prints the statement in k3po syntax.
func (c *ReadAdvise) String() string { return valuesString("read advise "+c.Kind, c.Values) }

// String prints the statement in k3po syntax.
func (c *WriteAdvised) String() string {
	return matchersString("write advised "+c.Kind, c.Values, c.Missing)
}

// String prints the statement in k3po syntax.
func (c *ReadNotify) String() string { return "read notify " + c.Barrier }

// String prints the statement in k3po syntax.
func (c *WriteNotify) String() string { return "write notify " + c.Barrier }

// String prints the statement in k3po syntax.
func (c *ReadAwait) String() string { return "read await " + c.Barrier }

// String prints the statement in k3po syntax.
func (c *WriteAwait) String() string { return "write await " + c.Barrier }

// quoteText quotes s as a k3po text literal, escaping what k3po escapes.
func quoteText(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// String prints the literal double-quoted, with k3po's escapes.
func (v *Text) String() string { return quoteText(v.Text) }

// String prints the bytes as [0x01 0x02].
func (v *Bytes) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, c := range v.Bytes {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "0x%02x", c)
	}
	b.WriteByte(']')
	return b.String()
}

// String prints the number with the marker of its kind: byte 1, 1s, 1, 1L.
func (v *Number) String() string {
	switch v.Kind {
	case NumByte:
		return "byte " + v.Lit
	case NumShort:
		return v.Lit + "s"
	case NumLong:
		return v.Lit + "L"
	}
	return v.Lit
}

// String prints ${…} with the expression on one line.
func (v *Expression) String() string { return "${" + nodeString(v.X) + "}" }

// String prints /pattern/.
func (m *Regex) String() string { return "/" + m.Pattern + "/" }

// String prints [0..N] or ([0..N]:name).
func (m *FixedBytes) String() string {
	if m.Capture == "" {
		return "[0.." + strconv.Itoa(m.Length) + "]"
	}
	return "([0.." + strconv.Itoa(m.Length) + "]:" + m.Capture + ")"
}

// String prints [0..${…}] or ([0..${…}]:name).
func (m *VariableBytes) String() string {
	if m.Capture == "" {
		return "[0.." + nodeString(m.Length) + "]"
	}
	return "([0.." + nodeString(m.Length) + "]:" + m.Capture + ")"
}

// String prints (kind:name).
func (m *NumberCapture) String() string { return "(" + m.Kind.String() + ":" + m.Capture + ")" }

// Excerpt returns the lines of src from line-context to line+context, each
// numbered, with line marked by ">". Runners print it beside a failure:
//
//	   9 | connected
//	> 10 | write "hello"
//	  11 | read "hello"
//
// Lines outside src are left out; a line outside src marks nothing and
// the excerpt shows the nearest lines.
func Excerpt(src []byte, line, context int) string {
	if len(src) == 0 {
		return ""
	}
	context = max(context, 0)
	lines := strings.Split(string(src), "\n")
	// A final newline ends the last line rather than starting an empty one,
	// unless the marked line is that empty one (an error at end of file).
	if n := len(lines); n > 1 && lines[n-1] == "" && line != n {
		lines = lines[:n-1]
	}
	// A line outside src centres the excerpt on the nearest line instead.
	center := min(max(line, 1), len(lines))
	lo, hi := max(center-context, 1), min(center+context, len(lines))
	width := len(strconv.Itoa(hi))
	var b strings.Builder
	for i := lo; i <= hi; i++ {
		marker := " "
		if i == line {
			marker = ">"
		}
		text := strings.TrimSuffix(lines[i-1], "\r")
		fmt.Fprintf(&b, "%s %*d | %s\n", marker, width, i, text)
	}
	return b.String()
}
