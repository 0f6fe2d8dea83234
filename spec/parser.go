package spec

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Parse parses one .rpt script. file is used only in positions. On error it
// returns a nil *Script and an [ErrorList] whose errors read
// "file:line:col: expected …, found …"; like k3po, it stops at the first
// error. Parse never panics, whatever src holds.
func Parse(file string, src []byte) (s *Script, err error) {
	p := &parser{f: newSrcFile(file, src), accepts: map[string]*Stream{}}
	p.lx = lexer{f: p.f, errs: &p.errs, warns: &p.warns}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			s, err = nil, p.errs.Err()
		}
	}()
	p.tok = p.lx.next()
	return p.script(), nil
}

type parser struct {
	f       *srcFile
	lx      lexer
	tok     token
	ahead   []token
	errs    ErrorList
	warns   ErrorList
	accepts map[string]*Stream // accept streams by their `as` name
	last    *Stream            // the latest accept stream
}

func (p *parser) fail(off int, format string, args ...any) {
	p.errs.add(p.f.pos(off), format, args...)
	panic(bailout{})
}

func (p *parser) pos(off int) Pos { return p.f.pos(off) }

// next moves to the next token.
func (p *parser) next() {
	if len(p.ahead) > 0 {
		p.tok, p.ahead = p.ahead[0], p.ahead[1:]
		return
	}
	p.tok = p.lx.next()
}

// peek returns the token after the current one.
func (p *parser) peek() token {
	if len(p.ahead) == 0 {
		p.ahead = append(p.ahead, p.lx.next())
	}
	return p.ahead[0]
}

func (p *parser) isKw(t token, kw string) bool { return t.kind == tKeyword && t.text == kw }

// describe names a token for an error message.
func (p *parser) describe(t token) string {
	src := string(p.f.src[t.off:t.end])
	switch t.kind {
	case tEOF:
		return "end of file"
	case tKeyword:
		return strconv.Quote(t.text)
	case tName:
		return "name " + strconv.Quote(t.text)
	case tQName:
		return strconv.Quote(t.text)
	case tText:
		return "text " + shorten(src)
	case tBytes:
		return "bytes " + shorten(src)
	case tNumber:
		return "number " + src
	case tExpr:
		return "expression " + shorten(src)
	case tRegex:
		return "regex " + shorten(src)
	case tCapture:
		return "capture " + strconv.Quote(src)
	}
	return strconv.Quote(src)
}

func (p *parser) script() *Script {
	s := &Script{File: p.f.name}
	defer func() { s.Warnings = p.warns }()
	for p.tok.kind != tEOF {
		t := p.tok
		switch {
		case p.isKw(t, "property"):
			s.Properties = append(s.Properties, p.property())
		case p.isKw(t, "connect"):
			s.Streams = append(s.Streams, p.connect())
		case p.isKw(t, "accept"):
			st := p.accept()
			s.Streams = append(s.Streams, st)
			p.last = st
			if a := st.Head.(*Accept); a.As != "" {
				p.accepts[a.As] = st
			}
		case p.isKw(t, "accepted"), p.isKw(t, "rejected"):
			p.acceptable()
		default:
			p.fail(t.off, "expected property, connect, accept, accepted or rejected, found %s", p.describe(t))
		}
	}
	return s
}

// property := 'property' Name writeValue
func (p *parser) property() *Property {
	pos := p.pos(p.tok.off)
	p.next()
	name := p.name("property")
	return &Property{Pos: pos, Name: name, Value: p.value("property " + name)}
}

// name reads the Name after what, such as a barrier or property name.
func (p *parser) name(what string) string {
	t := p.tok
	if t.kind != tName {
		p.fail(t.off, "expected a name after %q, found %s", what, p.describe(t))
	}
	p.next()
	return t.text
}

// location := literalText | expressionValue
func (p *parser) location(after string) Value {
	t := p.tok
	switch t.kind {
	case tText:
		if _, err := url.Parse(t.str); err != nil {
			p.fail(t.off, "malformed URI %s: %v", shorten(t.str), err)
		}
		p.next()
		return &Text{Pos: p.pos(t.off), Text: t.str}
	case tExpr:
		p.next()
		return &Expression{Pos: p.pos(t.off), X: t.x, Src: t.text}
	}
	p.fail(t.off, "expected a URI (text or ${…}) after %q, found %s", after, p.describe(t))
	return nil
}

// connect := 'connect' ('await' Name)? location option* streamable+
func (p *parser) connect() *Stream {
	pos := p.pos(p.tok.off)
	c := &Connect{Pos: pos}
	p.next()
	if p.isKw(p.tok, "await") {
		p.next()
		c.Await = p.name("await")
	}
	c.URI = p.location("connect")
	c.Options = p.options(zillaConnectOptions, nil, "connect")
	st := &Stream{Pos: pos, Head: c}
	st.Commands = p.streamables("connect")
	return st
}

// accept := 'accept' ('await' Name)? location ('as' Name)? ('notify' Name)?
// option* serverStreamable*
func (p *parser) accept() *Stream {
	pos := p.pos(p.tok.off)
	a := &Accept{Pos: pos}
	p.next()
	if p.isKw(p.tok, "await") {
		p.next()
		a.Await = p.name("await")
	}
	a.URI = p.location("accept")
	if p.isKw(p.tok, "as") {
		p.next()
		a.As = p.name("as")
	}
	if p.isKw(p.tok, "notify") {
		p.next()
		a.Notify = p.name("notify")
	}
	a.Options = p.options(zillaAcceptOptions, nil, "accept")
	st := &Stream{Pos: pos, Head: a}
	for {
		t := p.tok
		cmd := p.command()
		if cmd == nil {
			break
		}
		if !serverStreamable(cmd) {
			p.fail(t.off, "expected accepted, found %s (only barriers, options and server events may come between accept and accepted)", statement(cmd))
		}
		st.Commands = append(st.Commands, cmd)
	}
	return st
}

// acceptable := 'accepted' Name? streamable+
// | 'rejected' Name? (QualifiedName writeValue*)? rejectable*
func (p *parser) acceptable() {
	t := p.tok
	pos := p.pos(t.off)
	p.next()
	name := ""
	if p.tok.kind == tName {
		name = p.tok.text
		p.next()
	}
	st := p.last
	if name != "" {
		st = p.accepts[name]
	}
	if st == nil {
		if name != "" {
			p.fail(t.off, "expected an accept declared \"as %s\" before %s, found none", name, t.text)
		}
		p.fail(t.off, "expected an accept before %s, found none", t.text)
	}
	if t.text == "accepted" {
		st.Commands = append(st.Commands, &Accepted{Pos: pos, Name: name})
		st.Commands = append(st.Commands, p.streamables("accepted")...)
		return
	}
	r := &Rejected{Pos: pos, Name: name}
	if p.tok.kind == tQName {
		r.Write = p.writeConfig(p.pos(p.tok.off), "rejected")
	}
	st.Commands = append(st.Commands, r)
	for {
		u := p.tok
		cmd := p.command()
		if cmd == nil {
			return
		}
		if !rejectable(cmd) {
			p.fail(u.off, "expected a barrier or read ns:name after rejected, found %s", statement(cmd))
		}
		st.Commands = append(st.Commands, cmd)
	}
}

// options := ('option' optionName writeValue)*
func (p *parser) options(zilla, plain []string, after string) []*Option {
	var opts []*Option
	for p.isKw(p.tok, "option") {
		pos := p.pos(p.tok.off)
		p.next()
		name := p.optionName(zilla, plain, after)
		opts = append(opts, &Option{Pos: pos, Name: name, Value: p.value("option " + name)})
	}
	return opts
}

// optionName reads a QualifiedName or Name and checks it against the zilla
// type system (for zilla:) or k3po's own options (unqualified).
func (p *parser) optionName(zilla, plain []string, after string) string {
	t := p.tok
	if t.kind != tQName && t.kind != tName {
		p.fail(t.off, "expected an option name after \"option\", found %s", p.describe(t))
	}
	ns, name := splitQName(t.text)
	switch {
	case t.kind == tName && !slices.Contains(plain, t.text):
		if len(plain) == 0 {
			p.fail(t.off, "expected a qualified option name such as zilla:window after %q, found name %q", after, t.text)
		}
		p.fail(t.off, "expected option %s after %q, found name %q", oneOf("", plain), after, t.text)
	case t.kind == tQName && ns == "zilla" && !slices.Contains(zilla, name):
		p.fail(t.off, "expected one of the zilla options %s after %q, found %q", oneOf("zilla:", zilla), after, t.text)
	}
	p.next()
	return t.text
}

// streamables parses the commands of a connect or accepted stream; there
// must be at least one.
func (p *parser) streamables(after string) []Command {
	var cmds []Command
	for {
		t := p.tok
		cmd := p.command()
		if cmd == nil {
			break
		}
		if !streamable(cmd) {
			p.fail(t.off, "expected a command of a connected stream, found %s (it belongs between accept and accepted)", statement(cmd))
		}
		cmds = append(cmds, cmd)
	}
	if len(cmds) == 0 {
		p.fail(p.tok.off, "expected a command after %q, found %s", after, p.describe(p.tok))
	}
	return cmds
}

// command parses one statement of a stream, or returns nil when the current
// token does not begin one (it then begins the next stream, a property, or
// is an error the caller reports).
func (p *parser) command() Command {
	t := p.tok
	if t.kind != tKeyword {
		return nil
	}
	pos := p.pos(t.off)
	switch t.text {
	case "read":
		p.next()
		return p.read(pos)
	case "write":
		p.next()
		return p.write(pos)
	case "connect":
		switch u := p.peek(); {
		case p.isKw(u, "abort"):
			p.next()
			p.next()
			return &ConnectAbort{pos}
		case p.isKw(u, "aborted"):
			p.next()
			p.next()
			c := &ConnectAborted{Pos: pos}
			if p.tok.kind == tQName {
				c.Read = p.readConfig(p.pos(p.tok.off), "connect aborted")
			}
			return c
		}
		return nil
	case "child":
		p.next()
		switch u := p.tok; {
		case p.isKw(u, "opened"):
			p.next()
			return &ChildOpened{pos}
		case p.isKw(u, "closed"):
			p.next()
			return &ChildClosed{pos}
		}
		p.fail(p.tok.off, "expected opened or closed after \"child\", found %s", p.describe(p.tok))
	}
	var cmd Command
	switch t.text {
	case "connected":
		cmd = &Connected{pos}
	case "opened":
		cmd = &Opened{pos}
	case "bound":
		cmd = &Bound{pos}
	case "unbound":
		cmd = &Unbound{pos}
	case "closed":
		cmd = &Closed{pos}
	case "close":
		cmd = &Close{pos}
	case "unbind":
		cmd = &Unbind{pos}
	case "disconnected":
		cmd = &Disconnected{pos}
	default:
		return nil
	}
	p.next()
	return cmd
}

// read parses what follows `read`.
func (p *parser) read(pos Pos) Command {
	t := p.tok
	switch {
	case p.isKw(t, "notify"):
		p.next()
		return &ReadNotify{Pos: pos, Barrier: p.name("read notify")}
	case p.isKw(t, "await"):
		p.next()
		return &ReadAwait{Pos: pos, Barrier: p.name("read await")}
	case p.isKw(t, "closed"):
		p.next()
		return &ReadClosed{pos}
	case p.isKw(t, "abort"):
		p.next()
		return &ReadAbort{pos}
	case p.isKw(t, "aborted"):
		p.next()
		return &ReadAborted{pos}
	case p.isKw(t, "option"):
		p.next()
		name := p.optionName(zillaReadOptions, defaultReadWriteOptions, "read option")
		return &ReadOption{Pos: pos, Name: name, Value: p.value("read option " + name)}
	case p.isKw(t, "advise"):
		p.next()
		kind := p.advisory(zillaReadAdvisories, "read advise")
		return &ReadAdvise{Pos: pos, Kind: kind, Values: p.values()}
	case p.isKw(t, "advised"):
		p.next()
		kind := p.advisory(zillaWriteAdvisories, "read advised")
		values, missing := p.matchersMissing()
		return &ReadAdvised{Pos: pos, Kind: kind, Values: values, Missing: missing}
	case t.kind == tQName:
		return p.readConfig(pos, "read")
	case matcherStart(t):
		var values []Matcher
		for matcherStart(p.tok) {
			values = append(values, p.matcher())
		}
		return &Read{Pos: pos, Values: values}
	}
	p.fail(t.off, "expected a matcher, closed, abort, aborted, option, advise, advised, notify, await or ns:name after \"read\", found %s", p.describe(t))
	return nil
}

// readConfig parses `ns:name matcher* missing?` after what (read, or
// connect aborted).
func (p *parser) readConfig(pos Pos, after string) Command {
	t := p.tok
	p.next()
	ns, name := splitQName(t.text)
	if ns == "zilla" {
		if !slices.Contains(zillaReadConfigs, name) {
			p.fail(t.off, "expected %s after %q, found %q", oneOf("zilla:", zillaReadConfigs), after, t.text)
		}
		if name == "data.empty" || name == "data.null" {
			if u := p.tok; matcherStart(u) || p.isKw(u, "missing") {
				p.fail(u.off, "expected nothing after %s, found %s", t.text, p.describe(u))
			}
			if name == "data.empty" {
				return &ReadDataEmpty{pos}
			}
			return &ReadDataNull{pos}
		}
	}
	values, missing := p.matchersMissing()
	if ns != "zilla" {
		return &ReadConfig{Pos: pos, Name: t.text, Values: values, Missing: missing}
	}
	return &ReadExt{Pos: pos, Kind: strings.TrimSuffix(name, ".ext"), Values: values, Missing: missing}
}

// write parses what follows `write`.
func (p *parser) write(pos Pos) Command {
	t := p.tok
	switch {
	case p.isKw(t, "notify"):
		p.next()
		return &WriteNotify{Pos: pos, Barrier: p.name("write notify")}
	case p.isKw(t, "await"):
		p.next()
		return &WriteAwait{Pos: pos, Barrier: p.name("write await")}
	case p.isKw(t, "flush"):
		p.next()
		return &WriteFlush{pos}
	case p.isKw(t, "close"):
		p.next()
		return &WriteClose{pos}
	case p.isKw(t, "abort"):
		p.next()
		return &WriteAbort{pos}
	case p.isKw(t, "aborted"):
		p.next()
		return &WriteAborted{pos}
	case p.isKw(t, "option"):
		p.next()
		name := p.optionName(zillaWriteOptions, defaultReadWriteOptions, "write option")
		return &WriteOption{Pos: pos, Name: name, Value: p.value("write option " + name)}
	case p.isKw(t, "advise"):
		p.next()
		kind := p.advisory(zillaWriteAdvisories, "write advise")
		return &WriteAdvise{Pos: pos, Kind: kind, Values: p.values()}
	case p.isKw(t, "advised"):
		p.next()
		kind := p.advisory(zillaReadAdvisories, "write advised")
		values, missing := p.matchersMissing()
		return &WriteAdvised{Pos: pos, Kind: kind, Values: values, Missing: missing}
	case t.kind == tQName:
		return p.writeConfig(pos, "write")
	case valueStart(t):
		return &Write{Pos: pos, Values: p.values()}
	}
	p.fail(t.off, "expected a value, flush, close, abort, aborted, option, advise, advised, notify, await or ns:name after \"write\", found %s", p.describe(t))
	return nil
}

// writeConfig parses `ns:name writeValue*` after what (write, or
// rejected).
func (p *parser) writeConfig(pos Pos, after string) Command {
	t := p.tok
	p.next()
	ns, name := splitQName(t.text)
	if ns == "zilla" {
		if !slices.Contains(zillaWriteConfigs, name) {
			p.fail(t.off, "expected %s after %q, found %q", oneOf("zilla:", zillaWriteConfigs), after, t.text)
		}
		if name == "data.empty" {
			if u := p.tok; valueStart(u) {
				p.fail(u.off, "expected nothing after %s, found %s", t.text, p.describe(u))
			}
			return &WriteDataEmpty{pos}
		}
	}
	values := p.values()
	if ns != "zilla" {
		return &WriteConfig{Pos: pos, Name: t.text, Values: values}
	}
	return &WriteExt{Pos: pos, Kind: strings.TrimSuffix(name, ".ext"), Values: values}
}

// advisory reads the QualifiedName after advise or advised and checks it
// against the zilla advisories of that direction.
func (p *parser) advisory(zilla []string, after string) string {
	t := p.tok
	if t.kind != tQName {
		p.fail(t.off, "expected an advisory such as zilla:flush after %q, found %s", after, p.describe(t))
	}
	if ns, name := splitQName(t.text); ns == "zilla" && !slices.Contains(zilla, name) {
		p.fail(t.off, "expected %s after %q, found %q", oneOf("zilla:", zilla), after, t.text)
	}
	p.next()
	return t.text
}

func valueStart(t token) bool {
	switch t.kind {
	case tText, tBytes, tNumber, tExpr:
		return true
	case tKeyword:
		switch t.text {
		case "byte", "short", "int", "long":
			return true
		}
	}
	return false
}

func matcherStart(t token) bool {
	switch t.kind {
	case tRegex, tFixedOpen, tFixedCap, tRepeatOpen, tNumCap:
		return true
	}
	return valueStart(t)
}

// values := writeValue*
func (p *parser) values() []Value {
	var vs []Value
	for valueStart(p.tok) {
		vs = append(vs, p.value(""))
	}
	return vs
}

// matchersMissing := matcher* 'missing'?
func (p *parser) matchersMissing() ([]Matcher, bool) {
	var ms []Matcher
	for matcherStart(p.tok) {
		ms = append(ms, p.matcher())
	}
	if p.isKw(p.tok, "missing") {
		p.next()
		return ms, true
	}
	return ms, false
}

// value := text | bytes | number | ${…}
func (p *parser) value(what string) Value {
	t := p.tok
	pos := p.pos(t.off)
	switch t.kind {
	case tText:
		p.next()
		return &Text{Pos: pos, Text: t.str}
	case tBytes:
		p.next()
		return &Bytes{Pos: pos, Bytes: t.b}
	case tExpr:
		p.next()
		return &Expression{Pos: pos, X: t.x, Src: t.text}
	case tNumber, tKeyword:
		if valueStart(t) {
			return p.number()
		}
	}
	if what == "" {
		what = "a value"
	} else {
		what = "a value for " + what
	}
	p.fail(t.off, "expected %s (text, bytes, number or ${…}), found %s", what, p.describe(t))
	return nil
}

// number := ('byte'|'short'|'int'|'long')? digits ('s'|'L')?
func (p *parser) number() *Number {
	t := p.tok
	pos := p.pos(t.off)
	kind := NumKind(0)
	if t.kind == tKeyword {
		kind = map[string]NumKind{"byte": NumByte, "short": NumShort, "int": NumInt, "long": NumLong}[t.text]
		p.next()
		if p.tok.kind != tNumber {
			p.fail(p.tok.off, "expected a number after %q, found %s", t.text, p.describe(p.tok))
		}
	}
	n := p.tok
	sfxKind := map[byte]NumKind{0: NumInt, 's': NumShort, 'L': NumLong}[n.sfx]
	switch {
	case kind == 0:
		kind = sfxKind
	case n.sfx != 0 && sfxKind != kind:
		p.fail(n.off, "expected a %s, found suffix %c on number %s", kind, n.sfx, n.text)
	}
	v, err := decodeJava(n.text, kind)
	if err != "" {
		p.fail(n.off, "%s", err)
	}
	p.next()
	return &Number{Pos: pos, Kind: kind, Lit: n.text, Value: v}
}

// decodeJava decodes a number literal the way Java's Byte/Short/Integer/
// Long.decode do after k3po strips the underscores: an optional sign, then
// 0x for hex, a leading 0 for octal, or decimal; the value must fit the
// signed range of kind. It returns a message on failure.
func decodeJava(lit string, kind NumKind) (int64, string) {
	s := strings.ReplaceAll(lit, "_", "")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	base := 10
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	u, err := strconv.ParseUint(s, base, 64)
	if err != nil && !isRangeErr(err) {
		if base == 8 {
			return 0, "malformed number " + lit + " (a leading 0 means octal, as in Java)"
		}
		return 0, "malformed number " + lit
	}
	limit := uint64(1)<<(kind.Size()*8-1) - 1
	if neg {
		limit++
	}
	if err != nil || u > limit {
		return 0, "number " + lit + " is out of range for " + kind.String()
	}
	if neg {
		return -int64(u-1) - 1, ""
	}
	return int64(u), ""
}

// matcher parses one operand of read.
func (p *parser) matcher() Matcher {
	t := p.tok
	pos := p.pos(t.off)
	switch t.kind {
	case tRegex:
		p.next()
		return p.regex(pos, t)
	case tFixedOpen:
		p.next()
		m := p.length(pos, "[0..")
		p.expectKind(tRBracket, `"]"`)
		return m
	case tFixedCap:
		p.next()
		m := p.length(pos, "([0..")
		p.expectKind(tRBracket, `"]"`)
		name := p.capture()
		p.expectKind(tRParen, `")"`)
		switch m := m.(type) {
		case *FixedBytes:
			m.Capture = name
		case *VariableBytes:
			m.Capture = name
		}
		return m
	case tRepeatOpen:
		p.next()
		name := p.capture()
		p.expectKind(tRepeatMid, `"){"`)
		n := p.decimal("[(:" + name + "){")
		p.expectKind(tRepeatEnd, `"}]"`)
		return &FixedBytes{Pos: pos, Length: n, Capture: name}
	case tNumCap:
		p.next()
		name := p.capture()
		p.expectKind(tRParen, `")"`)
		kind := map[string]NumKind{"byte": NumByte, "short": NumShort, "int": NumInt, "long": NumLong}[t.text]
		return &NumberCapture{Pos: pos, Kind: kind, Capture: name}
	}
	return p.value("").(Matcher)
}

// length parses the N or ${…} of [0..N] and ([0..N]:name).
func (p *parser) length(pos Pos, after string) Matcher {
	if t := p.tok; t.kind == tExpr {
		p.next()
		return &VariableBytes{Pos: pos, Length: &Expression{Pos: p.pos(t.off), X: t.x, Src: t.text}}
	}
	return &FixedBytes{Pos: pos, Length: p.decimal(after)}
}

// decimal reads a DecimalLiteral that fits an int32, as a byte count.
func (p *parser) decimal(after string) int {
	t := p.tok
	if t.kind != tNumber || t.sfx != 0 || !isDigit(t.text[0]) || strings.HasPrefix(t.text, "0x") || strings.HasPrefix(t.text, "0X") {
		p.fail(t.off, "expected a decimal length or ${…} after %q, found %s", after, p.describe(t))
	}
	n, err := strconv.ParseInt(t.text, 10, 32)
	if err != nil {
		p.fail(t.off, "length %s is out of range", t.text)
	}
	p.next()
	return int(n)
}

// capture reads a CaptureLiteral, :name.
func (p *parser) capture() string {
	t := p.tok
	if t.kind != tCapture {
		p.fail(t.off, "expected a capture :name, found %s", p.describe(t))
	}
	p.next()
	return t.text
}

func (p *parser) expectKind(kind tokKind, what string) {
	if p.tok.kind != kind {
		p.fail(p.tok.off, "expected %s, found %s", what, p.describe(p.tok))
	}
	p.next()
}

// regex checks the pattern of t and collects its group names.
func (p *parser) regex(pos Pos, t token) *Regex {
	groups, total, bad, msg := regexGroups(t.text)
	if msg != "" {
		p.fail(t.off+1+bad, "malformed regex /%s/: %s", t.text, msg)
	}
	if len(groups) > 0 && len(groups) != total {
		p.fail(t.off, "expected every group of regex /%s/ to be named once one is, found %d groups and %d names", t.text, total, len(groups))
	}
	return &Regex{Pos: pos, Pattern: t.text, Groups: groups}
}

// regexGroups scans a Java regex for its capturing groups, the way k3po's
// Regex.g4 does before it compiles the pattern: it returns the names of
// the named groups, the number of capturing groups, and for a pattern
// whose parentheses or classes do not balance, an offset and a message.
func regexGroups(re string) (names []string, total, bad int, msg string) {
	var open []int
	for i := 0; i < len(re); i++ {
		switch re[i] {
		case '\\':
			if i+1 >= len(re) {
				return nil, 0, i, "trailing backslash"
			}
			if re[i+1] == 'Q' {
				end := strings.Index(re[i+2:], `\E`)
				if end < 0 {
					return names, total, len(re), ""
				}
				i += 2 + end + 1
				continue
			}
			i++
		case '[':
			end := classEnd(re, i)
			if end < 0 {
				return nil, 0, i, "missing ] to close the character class"
			}
			i = end
		case '(':
			open = append(open, i)
			rest := re[i+1:]
			switch {
			case strings.HasPrefix(rest, "?<") && !strings.HasPrefix(rest, "?<=") && !strings.HasPrefix(rest, "?<!"),
				strings.HasPrefix(rest, "?P<"):
				start := strings.IndexByte(rest, '<') + 1
				end := strings.IndexByte(rest[start:], '>')
				if end <= 0 {
					return nil, 0, i, "malformed group name"
				}
				names = append(names, rest[start:start+end])
				total++
			case strings.HasPrefix(rest, "?"):
			default:
				total++
			}
		case ')':
			if len(open) == 0 {
				return nil, 0, i, "unexpected )"
			}
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 {
		return nil, 0, open[len(open)-1], "missing ) to close the group"
	}
	return names, total, 0, ""
}

// classEnd returns the offset of the ] that closes the character class
// opening at start, or -1. As in Java, a ] right after [ or [^ is literal
// and classes nest.
func classEnd(re string, start int) int {
	depth := 0
	for i := start; i < len(re); i++ {
		switch re[i] {
		case '\\':
			i++
		case '[':
			depth++
			if i+1 < len(re) && re[i+1] == '^' {
				i++
			}
			if i+1 < len(re) && re[i+1] == ']' {
				i++
			}
		case ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// serverStreamable reports whether cmd may come between accept and
// accepted: Robot.g4's serverStreamableNode.
func serverStreamable(cmd Command) bool {
	switch cmd.(type) {
	case *ReadNotify, *WriteNotify, *ReadAwait, *WriteAwait,
		*Opened, *Bound, *ChildOpened, *ChildClosed, *Unbound, *Closed,
		*Unbind, *Close, *ReadOption, *WriteOption:
		return true
	}
	return false
}

// streamable reports whether cmd may be part of a connect or accepted
// stream: Robot.g4's streamableNode.
func streamable(cmd Command) bool {
	switch cmd.(type) {
	case *ChildOpened, *ChildClosed, *Unbind:
		return false
	}
	return true
}

// rejectable reports whether cmd may follow rejected: a barrier or a read
// of a qualified name.
func rejectable(cmd Command) bool {
	switch cmd.(type) {
	case *ReadNotify, *WriteNotify, *ReadAwait, *WriteAwait,
		*ReadExt, *ReadDataEmpty, *ReadDataNull, *ReadConfig:
		return true
	}
	return false
}

// statement names the kind of cmd for an error: its leading keywords, such
// as "read", "write close" or "read zilla:begin.ext".
func statement(cmd Command) string {
	f := strings.Fields(cmd.String())
	if len(f) >= 2 && (keywords[f[1]] || strings.Contains(f[1], ":") && !strings.ContainsAny(f[1][:1], "\"'$[(/")) {
		return strconv.Quote(f[0] + " " + f[1])
	}
	return strconv.Quote(f[0])
}
