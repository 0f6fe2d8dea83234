package spec

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/sluicehq/sluice/idl/dynamic"
)

// RunPair plays a client script against a server script in memory, peer to
// peer, as Zilla's spec ITs do with k3po and no engine: client (connect
// "zilla://streams/<name>") against server (accept on the same address).
// clientSrc and serverSrc are the sources the scripts were parsed from; they
// are only used to show an excerpt when a command fails.
//
// Each script runs in a goroutine of its own and the two exchange typed
// frames over channels: BEGIN (with its extension), DATA (payload,
// extension, flags), FLUSH, END, ABORT, RESET, WINDOW (credit) and
// CHALLENGE. The zilla:// semantics supported are a subset of Zilla's k3po
// transport:
//
//   - One stream per script: a connect (client) or an accept with one
//     accepted connection (server). `connect await X` and
//     `accept … notify X` are honoured.
//   - Options: zilla:window N (the credit this side grants its peer when
//     the peer's BEGIN arrives; 65536 when absent), zilla:update "stream"
//     (the reader reports a WINDOW for the bytes it consumed as soon as it
//     consumes them; the only policy supported) and zilla:transmission
//     "duplex" (the default) or "half-duplex". Other options fail as
//     unsupported.
//   - connected: the client sends its BEGIN; in duplex it then waits for
//     the reply BEGIN, in half-duplex it does not. The server waits for the
//     client's BEGIN; in duplex it replies with its BEGIN at once, in
//     half-duplex the reply BEGIN is deferred until its first write,
//     `write flush`, advisory, close or abort.
//   - write zilla:<kind>.ext sets the extension of the next frame of that
//     kind sent (begin, data, end, abort, reset). The BEGIN extension must
//     be written before the BEGIN goes out. read zilla:begin.ext checks the
//     peer's BEGIN (waiting for it); read zilla:data.ext, end.ext,
//     abort.ext and reset.ext check the next DATA, END, ABORT or RESET
//     consumed. An expected value that is a *dynamic.Matcher is matched
//     with Match, bytes compare equal.
//   - write "text" / [0x..] / number / ${bytes} sends DATA, split across
//     the credit the peer granted and blocking for WINDOW frames while it
//     has none; read of the same operands expects exactly those bytes
//     next, joining DATA frames as needed (capturing matchers, regexes and
//     byte ranges are unsupported).
//   - write flush (the deferred BEGIN, or else an empty FLUSH),
//     write advise zilla:flush ${ext} / read advised zilla:flush ${match},
//     write close / read closed (END), write abort / read aborted (ABORT),
//     read abort (RESET) / write aborted (RESET expected).
//   - Barriers (read|write notify X, read|write await X) are shared by
//     both scripts; properties are evaluated into each script's Env, and
//     zilla:id labels are shared by both Envs.
//
// Any other command fails with `unsupported command "…" at file:line`.
//
// The first command that fails ends the run: its error reads
// "<file>:<line>: <what was expected>, observed <frame>" followed by an
// Excerpt of the script around the line, and the other script is stopped.
// Every wait is bounded by ctx; when its deadline passes the error reads
// "<file>:<line>: timed out waiting for <what>". When both scripts fail on
// their own (both time out) both errors are joined.
func RunPair(ctx context.Context, client, server *Script, clientSrc, serverSrc []byte) error {
	if len(client.Streams) == 0 {
		return fmt.Errorf("%s: no connect stream", client.File)
	}
	if len(server.Streams) == 0 {
		return fmt.Errorf("%s: no accept stream", server.File)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	labels := newSharedLabels()
	bars := &barriers{m: map[string]chan struct{}{}}
	c2s := make(chan frame, mailboxSize)
	s2c := make(chan frame, mailboxSize)
	c := newPeer(client, clientSrc, false, s2c, c2s, bars, labels)
	s := newPeer(server, serverSrc, true, c2s, s2c, bars, labels)

	if err := checkAddresses(c, s); err != nil {
		return err
	}

	errs := make(chan error, 2)
	var wg sync.WaitGroup
	for _, p := range []*peer{c, s} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := p.run(ctx)
			if err != nil && !errors.Is(err, errPeerFailed) {
				cancel(errPeerFailed)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		if err != nil && !errors.Is(err, errPeerFailed) {
			all = append(all, err)
		}
	}
	return errors.Join(all...)
}

// mailboxSize bounds the frames in flight in one direction.
const mailboxSize = 4096

// defaultWindow is the credit granted when zilla:window is not given.
const defaultWindow = 65536

// errPeerFailed stops a script because the other one failed first.
var errPeerFailed = errors.New("the peer script failed")

type frameKind uint8

const (
	frameBegin frameKind = iota + 1
	frameData
	frameFlush
	frameEnd
	frameAbort
	frameReset
	frameWindow
	frameChallenge
)

var frameNames = [...]string{
	frameBegin: "BEGIN", frameData: "DATA", frameFlush: "FLUSH", frameEnd: "END",
	frameAbort: "ABORT", frameReset: "RESET", frameWindow: "WINDOW", frameChallenge: "CHALLENGE",
}

func (k frameKind) String() string { return frameNames[k] }

// frame is one event exchanged by the peers.
type frame struct {
	kind    frameKind
	ext     []byte
	payload []byte
	flags   uint8
	credit  int
}

// dataFlags is INIT|FIN, the flags of every DATA frame sent.
const dataFlags = 0x03

type barriers struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

func (b *barriers) get(name string) chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch, ok := b.m[name]
	if !ok {
		ch = make(chan struct{})
		b.m[name] = ch
	}
	return ch
}

func (b *barriers) notify(name string) {
	ch := b.get(name)
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func newSharedLabels() func(string) int32 {
	var mu sync.Mutex
	ids := map[string]int32{}
	return func(name string) int32 {
		mu.Lock()
		defer mu.Unlock()
		id, ok := ids[name]
		if !ok {
			id = int32(len(ids) + 1)
			ids[name] = id
		}
		return id
	}
}

// peer is one script being played.
type peer struct {
	script *Script
	src    []byte
	server bool
	env    *Env
	in     <-chan frame
	out    chan<- frame
	bars   *barriers

	window     int
	halfDuplex bool

	beginSent  bool
	peerBegun  bool
	peerBegin  frame
	credit     int
	reset      *frame
	inbound    []frame
	off        int // bytes of inbound[0] already consumed
	writeExt   map[string][]byte
	readExt    map[string]*ReadExt
	stopped    bool // END, ABORT sent or RESET received: no more writes
	schemaOnce sync.Once
	schema     *dynamic.Schema
}

func newPeer(s *Script, src []byte, server bool, in <-chan frame, out chan<- frame, bars *barriers, labels func(string) int32) *peer {
	return &peer{
		script: s, src: src, server: server, in: in, out: out, bars: bars,
		env:      &Env{Properties: map[string]any{}, Labels: labels, File: s.File},
		window:   defaultWindow,
		writeExt: map[string][]byte{},
		readExt:  map[string]*ReadExt{},
	}
}

// checkAddresses checks that the client connects where the server accepts.
func checkAddresses(c, s *peer) error {
	var cu, su string
	var err error
	conn, ok := c.script.Streams[0].Head.(*Connect)
	if !ok {
		return c.failf(c.script.Streams[0].Head, "expected a connect stream in the client script")
	}
	acc, ok := s.script.Streams[0].Head.(*Accept)
	if !ok {
		return s.failf(s.script.Streams[0].Head, "expected an accept stream in the server script")
	}
	if err := c.evalProperties(); err != nil {
		return err
	}
	if err := s.evalProperties(); err != nil {
		return err
	}
	if cu, err = c.evalString(conn.URI); err != nil {
		return c.failf(conn, "%v", err)
	}
	if su, err = s.evalString(acc.URI); err != nil {
		return s.failf(acc, "%v", err)
	}
	for _, u := range []struct {
		p   *peer
		n   Node
		uri string
	}{{c, conn, cu}, {s, acc, su}} {
		if !strings.HasPrefix(u.uri, "zilla://streams/") {
			return u.p.failf(u.n, "unsupported address %q: want zilla://streams/<name>", u.uri)
		}
	}
	if cu != su {
		return c.failf(conn, "client connects to %q but the server accepts %q", cu, su)
	}
	return nil
}

func (p *peer) evalProperties() error {
	for _, prop := range p.script.Properties {
		v, err := p.evalValue(prop.Value)
		if err != nil {
			return p.failf(prop, "%v", err)
		}
		p.env.Properties[prop.Name] = v
	}
	return nil
}

func (p *peer) evalValue(v Value) (any, error) {
	switch v := v.(type) {
	case *Text:
		return v.Text, nil
	case *Bytes:
		return v.Bytes, nil
	case *Number:
		return v.Value, nil
	case *Expression:
		return p.env.Eval(v.X)
	}
	return nil, fmt.Errorf("unsupported value %s", v)
}

func (p *peer) evalString(v Value) (string, error) {
	x, err := p.evalValue(v)
	if err != nil {
		return "", err
	}
	s, ok := x.(string)
	if !ok {
		return "", fmt.Errorf("want a string, got %s", describeValue(x))
	}
	return s, nil
}

// bytesOf converts one written or matched operand to its bytes.
func (p *peer) bytesOf(n Node) ([]byte, error) {
	switch v := n.(type) {
	case *Text:
		return []byte(v.Text), nil
	case *Bytes:
		return v.Bytes, nil
	case *Number:
		b := make([]byte, 8)
		binary.BigEndian.PutUint64(b, uint64(v.Value))
		return b[8-v.Kind.Size():], nil
	case *Expression:
		x, err := p.env.Eval(v.X)
		if err != nil {
			return nil, err
		}
		switch x := x.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
		return nil, fmt.Errorf("${%s}: want bytes, got %s", v.Src, describeValue(x))
	}
	return nil, fmt.Errorf("unsupported operand %s", n.(interface{ String() string }).String())
}

func (p *peer) concat(vals []Value) ([]byte, error) {
	var out []byte
	for _, v := range vals {
		b, err := p.bytesOf(v)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return out, nil
}

// failf formats a failure at n's line, with an excerpt of the script.
func (p *peer) failf(n Node, format string, args ...any) error {
	line := n.Position().Line
	msg := fmt.Sprintf("%s:%d: %s", p.script.File, line, fmt.Sprintf(format, args...))
	if ex := Excerpt(p.src, line, 2); ex != "" {
		msg += "\n" + strings.TrimSuffix(ex, "\n")
	}
	return errors.New(msg)
}

func (p *peer) unsupported(n Node, what string) error {
	line := n.Position().Line
	msg := fmt.Sprintf("unsupported %s at %s:%d", what, p.script.File, line)
	if ex := Excerpt(p.src, line, 2); ex != "" {
		msg += "\n" + strings.TrimSuffix(ex, "\n")
	}
	return errors.New(msg)
}

// send delivers f to the peer.
func (p *peer) send(ctx context.Context, n Node, f frame) error {
	select {
	case p.out <- f:
		return nil
	case <-ctx.Done():
		return p.ctxErr(ctx, n, "room to send "+f.kind.String())
	}
}

func (p *peer) ctxErr(ctx context.Context, n Node, what string) error {
	if errors.Is(context.Cause(ctx), errPeerFailed) {
		return errPeerFailed
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return p.failf(n, "timed out waiting for %s", what)
	}
	return p.failf(n, "canceled waiting for %s: %v", what, context.Cause(ctx))
}

// absorb takes in one frame from the peer.
func (p *peer) absorb(ctx context.Context, n Node, f frame) error {
	switch f.kind {
	case frameBegin:
		p.peerBegun, p.peerBegin = true, f
		return p.send(ctx, n, frame{kind: frameWindow, credit: p.window})
	case frameWindow:
		p.credit += f.credit
	case frameReset:
		p.reset = &f
	default:
		p.inbound = append(p.inbound, f)
	}
	return nil
}

// wait absorbs frames until ready returns true; wake, when not nil, is
// also waited on (a barrier).
func (p *peer) wait(ctx context.Context, n Node, what string, wake <-chan struct{}, ready func() bool) error {
	for {
	drain:
		for {
			select {
			case f := <-p.in:
				if err := p.absorb(ctx, n, f); err != nil {
					return err
				}
			default:
				break drain
			}
		}
		if ready() {
			return nil
		}
		select {
		case f := <-p.in:
			if err := p.absorb(ctx, n, f); err != nil {
				return err
			}
		case <-wake:
			wake = nil
		case <-ctx.Done():
			return p.ctxErr(ctx, n, what)
		}
	}
}

func (p *peer) awaitBarrier(ctx context.Context, n Node, name string) error {
	ch := p.bars.get(name)
	return p.wait(ctx, n, "barrier "+name, ch, func() bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	})
}

// run plays the script's one stream.
func (p *peer) run(ctx context.Context) error {
	if len(p.script.Streams) > 1 {
		return p.unsupported(p.script.Streams[1], "second stream (one stream per script)")
	}
	st := p.script.Streams[0]
	var opts []*Option
	switch h := st.Head.(type) {
	case *Connect:
		opts = h.Options
		if h.Await != "" {
			if err := p.awaitBarrier(ctx, h, h.Await); err != nil {
				return err
			}
		}
	case *Accept:
		opts = h.Options
		if h.Await != "" {
			if err := p.awaitBarrier(ctx, h, h.Await); err != nil {
				return err
			}
		}
		if h.Notify != "" {
			p.bars.notify(h.Notify)
		}
	}
	for _, o := range opts {
		if err := p.option(o); err != nil {
			return err
		}
	}
	accepted := 0
	for _, cmd := range st.Commands {
		if a, ok := cmd.(*Accepted); ok {
			if accepted++; accepted > 1 {
				return p.unsupported(a, "second accepted connection (one per script)")
			}
			continue
		}
		if err := p.exec(ctx, cmd); err != nil {
			return err
		}
	}
	return nil
}

func (p *peer) option(o *Option) error {
	v, err := p.evalValue(o.Value)
	if err != nil {
		return p.failf(o, "%v", err)
	}
	switch o.Name {
	case "zilla:window":
		n, ok := v.(int64)
		if !ok || n < 0 {
			return p.failf(o, "zilla:window wants a non-negative number, got %s", describeValue(v))
		}
		p.window = int(n)
	case "zilla:transmission":
		switch v {
		case "duplex":
			p.halfDuplex = false
		case "half-duplex":
			p.halfDuplex = true
		default:
			return p.unsupported(o, fmt.Sprintf("option zilla:transmission %s", describeValue(v)))
		}
	case "zilla:update":
		if v != "stream" {
			return p.unsupported(o, fmt.Sprintf("option zilla:update %s", describeValue(v)))
		}
	default:
		return p.unsupported(o, fmt.Sprintf("option %q", o.Name))
	}
	return nil
}

// commandName names a command for the unsupported error, without operands.
func commandName(c Command) string {
	switch c := c.(type) {
	case *ReadAdvise:
		return "read advise " + c.Kind
	case *WriteAdvised:
		return "write advised " + c.Kind
	case *WriteAdvise:
		return "write advise " + c.Kind
	case *ReadAdvised:
		return "read advised " + c.Kind
	case *ReadConfig:
		return "read " + c.Name
	case *WriteConfig:
		return "write " + c.Name
	case *ReadOption:
		return "read option " + c.Name
	case *WriteOption:
		return "write option " + c.Name
	case *ReadExt:
		return "read zilla:" + c.Kind + ".ext"
	case *WriteExt:
		return "write zilla:" + c.Kind + ".ext"
	case *Rejected:
		return "rejected"
	case *ConnectAborted:
		return "connect aborted"
	}
	return c.String()
}

func (p *peer) exec(ctx context.Context, cmd Command) error {
	switch c := cmd.(type) {
	case *Connected:
		return p.connected(ctx, c)
	case *Write:
		b, err := p.concat(c.Values)
		if err != nil {
			return p.failf(c, "%v", err)
		}
		return p.writeData(ctx, c, b)
	case *WriteDataEmpty:
		return p.writeData(ctx, c, nil)
	case *Read:
		return p.read(ctx, c)
	case *WriteExt:
		return p.setWriteExt(c)
	case *ReadExt:
		if c.Missing {
			return p.unsupported(c, fmt.Sprintf("command %q", commandName(c)+" missing"))
		}
		if c.Kind == "begin" {
			return p.readBeginExt(ctx, c)
		}
		p.readExt[c.Kind] = c
		return nil
	case *WriteFlush:
		if !p.beginSent {
			return p.ensureBegin(ctx, c)
		}
		return p.sendFrame(ctx, c, frame{kind: frameFlush})
	case *WriteAdvise:
		if c.Kind != "zilla:flush" {
			return p.unsupported(c, fmt.Sprintf("command %q", commandName(c)))
		}
		ext, err := p.concat(c.Values)
		if err != nil {
			return p.failf(c, "%v", err)
		}
		return p.sendFrame(ctx, c, frame{kind: frameFlush, ext: ext})
	case *ReadAdvised:
		if c.Kind != "zilla:flush" || c.Missing {
			return p.unsupported(c, fmt.Sprintf("command %q", commandName(c)))
		}
		return p.readFrame(ctx, c, frameFlush, c.Values)
	case *WriteClose:
		return p.sendClosing(ctx, c, frameEnd, "end")
	case *WriteAbort:
		return p.sendClosing(ctx, c, frameAbort, "abort")
	case *ReadClosed:
		return p.readFrame(ctx, c, frameEnd, p.takeReadExt("end"))
	case *ReadAborted:
		return p.readFrame(ctx, c, frameAbort, p.takeReadExt("abort"))
	case *ReadAbort:
		ext := p.writeExt["reset"]
		delete(p.writeExt, "reset")
		return p.send(ctx, c, frame{kind: frameReset, ext: ext})
	case *WriteAborted:
		return p.writeAborted(ctx, c)
	case *ReadNotify:
		p.bars.notify(c.Barrier)
		return nil
	case *WriteNotify:
		p.bars.notify(c.Barrier)
		return nil
	case *ReadAwait:
		return p.awaitBarrier(ctx, c, c.Barrier)
	case *WriteAwait:
		return p.awaitBarrier(ctx, c, c.Barrier)
	}
	return p.unsupported(cmd, fmt.Sprintf("command %q", commandName(cmd)))
}

func (p *peer) takeReadExt(kind string) []Matcher {
	re := p.readExt[kind]
	delete(p.readExt, kind)
	if re == nil {
		return nil
	}
	return re.Values
}

// ensureBegin sends this side's BEGIN if it has not gone out yet.
func (p *peer) ensureBegin(ctx context.Context, n Node) error {
	if p.beginSent {
		return nil
	}
	if p.server && !p.peerBegun {
		if err := p.wait(ctx, n, "BEGIN", nil, func() bool { return p.peerBegun }); err != nil {
			return err
		}
	}
	ext := p.writeExt["begin"]
	delete(p.writeExt, "begin")
	p.beginSent = true
	return p.send(ctx, n, frame{kind: frameBegin, ext: ext})
}

func (p *peer) connected(ctx context.Context, c *Connected) error {
	if !p.server {
		if err := p.ensureBegin(ctx, c); err != nil {
			return err
		}
		if p.halfDuplex {
			return nil
		}
		return p.wait(ctx, c, "BEGIN", nil, func() bool { return p.peerBegun })
	}
	if err := p.wait(ctx, c, "BEGIN", nil, func() bool { return p.peerBegun }); err != nil {
		return err
	}
	if p.halfDuplex {
		return nil
	}
	return p.ensureBegin(ctx, c)
}

func (p *peer) setWriteExt(c *WriteExt) error {
	if c.Kind == "begin" && p.beginSent {
		return p.failf(c, "write zilla:begin.ext after the BEGIN was sent; write it before connected")
	}
	b, err := p.concat(c.Values)
	if err != nil {
		return p.failf(c, "%v", err)
	}
	p.writeExt[c.Kind] = b
	return nil
}

// sendFrame sends a FLUSH, END or ABORT after the BEGIN.
func (p *peer) sendFrame(ctx context.Context, n Node, f frame) error {
	if err := p.ensureBegin(ctx, n); err != nil {
		return err
	}
	if p.stopped {
		return p.failf(n, "cannot send %s: the stream is already closed", f.kind)
	}
	return p.send(ctx, n, f)
}

func (p *peer) sendClosing(ctx context.Context, n Node, kind frameKind, extKind string) error {
	ext := p.writeExt[extKind]
	delete(p.writeExt, extKind)
	if err := p.sendFrame(ctx, n, frame{kind: kind, ext: ext}); err != nil {
		return err
	}
	p.stopped = true
	return nil
}

// writeData sends b as DATA frames within the credit granted.
func (p *peer) writeData(ctx context.Context, n Node, b []byte) error {
	if err := p.ensureBegin(ctx, n); err != nil {
		return err
	}
	ext := p.writeExt["data"]
	delete(p.writeExt, "data")
	first := true
	for first || len(b) > 0 {
		if p.stopped {
			return p.failf(n, "cannot send DATA: the stream is already closed")
		}
		if len(b) > 0 {
			what := fmt.Sprintf("WINDOW to send %d bytes", len(b))
			err := p.wait(ctx, n, what, nil, func() bool { return p.credit > 0 || p.reset != nil })
			if err != nil {
				return err
			}
			if p.reset != nil {
				return p.failf(n, "expected %s, observed %s", what, p.describe(*p.reset, ""))
			}
		}
		size := min(len(b), p.credit)
		f := frame{kind: frameData, payload: bytes.Clone(b[:size]), flags: dataFlags}
		if first {
			f.ext = ext
		}
		if err := p.send(ctx, n, f); err != nil {
			return err
		}
		p.credit -= size
		b = b[size:]
		first = false
	}
	return nil
}

func (p *peer) writeAborted(ctx context.Context, c *WriteAborted) error {
	if err := p.wait(ctx, c, "RESET", nil, func() bool { return p.reset != nil }); err != nil {
		return err
	}
	p.stopped = true
	vals := p.takeReadExt("reset")
	if typ, err := p.checkExt(vals, p.reset.ext); err != nil {
		return p.failf(c, "expected RESET with extension %s (%v), observed %s", p.expectedExt(vals), err, p.describe(*p.reset, typ))
	}
	return nil
}

func (p *peer) readBeginExt(ctx context.Context, c *ReadExt) error {
	if err := p.wait(ctx, c, "BEGIN", nil, func() bool { return p.peerBegun }); err != nil {
		return err
	}
	if typ, err := p.checkExt(c.Values, p.peerBegin.ext); err != nil {
		return p.failf(c, "expected BEGIN with extension %s (%v), observed %s", p.expectedExt(c.Values), err, p.describe(p.peerBegin, typ))
	}
	return nil
}

// readFrame expects the next inbound frame to be of kind, with an
// extension matching vals (when not empty).
func (p *peer) readFrame(ctx context.Context, n Node, kind frameKind, vals []Matcher) error {
	if err := p.wait(ctx, n, kind.String(), nil, func() bool { return len(p.inbound) > 0 }); err != nil {
		return err
	}
	f := p.inbound[0]
	if f.kind == frameData && p.off > 0 {
		f.payload = f.payload[p.off:]
	}
	typ := p.extType(vals)
	if f.kind != kind {
		return p.failf(n, "expected %s, observed %s", kind, p.describe(f, typ))
	}
	p.inbound, p.off = p.inbound[1:], 0
	if typ, err := p.checkExt(vals, f.ext); err != nil {
		return p.failf(n, "expected %s with extension %s (%v), observed %s", kind, p.expectedExt(vals), err, p.describe(f, typ))
	}
	return nil
}

// read expects the next inbound bytes to equal the operands.
func (p *peer) read(ctx context.Context, c *Read) error {
	var want []byte
	for _, m := range c.Values {
		switch m.(type) {
		case *Text, *Bytes, *Number, *Expression:
		default:
			return p.unsupported(m, fmt.Sprintf("read operand %s", m))
		}
		b, err := p.bytesOf(m)
		if err != nil {
			return p.failf(c, "%v", err)
		}
		want = append(want, b...)
	}
	expected := "DATA " + quoteBytes(want)
	var got []byte
	for len(got) < len(want) || len(want) == 0 {
		what := expected
		if len(got) > 0 {
			what = fmt.Sprintf("%s (%d of %d bytes received)", expected, len(got), len(want))
		}
		if err := p.wait(ctx, c, what, nil, func() bool { return len(p.inbound) > 0 }); err != nil {
			return err
		}
		f := p.inbound[0]
		if f.kind != frameData {
			obs := p.describe(f, "")
			if len(got) > 0 {
				obs = fmt.Sprintf("DATA %s then %s", quoteBytes(got), obs)
			}
			return p.failf(c, "expected %s, observed %s", expected, obs)
		}
		if p.off == 0 {
			if vals := p.takeReadExt("data"); vals != nil {
				if typ, err := p.checkExt(vals, f.ext); err != nil {
					return p.failf(c, "expected DATA with extension %s (%v), observed %s", p.expectedExt(vals), err, p.describe(f, typ))
				}
			}
		}
		rest := f.payload[p.off:]
		take := min(len(rest), len(want)-len(got))
		got = append(got, rest[:take]...)
		if !bytes.Equal(got, want[:len(got)]) {
			return p.failf(c, "expected %s, observed DATA %s", expected, quoteBytes(got))
		}
		p.off += take
		if p.off == len(f.payload) {
			p.inbound, p.off = p.inbound[1:], 0
		}
		if take > 0 {
			if err := p.send(ctx, c, frame{kind: frameWindow, credit: take}); err != nil {
				return err
			}
		}
		if len(want) == 0 {
			break
		}
	}
	return nil
}

// checkExt checks ext against the expected values: a single
// *dynamic.Matcher is matched, anything else compares as bytes. No values
// accepts any extension. typ is the IDL type of the matcher, or "".
func (p *peer) checkExt(vals []Matcher, ext []byte) (typ string, err error) {
	if len(vals) == 0 {
		return "", nil
	}
	if len(vals) == 1 {
		if x, ok := vals[0].(*Expression); ok {
			v, err := p.env.Eval(x.X)
			if err != nil {
				return "", err
			}
			switch v := v.(type) {
			case *dynamic.Matcher:
				return p.typeName(v), v.Match(ext)
			case []byte:
				if !bytes.Equal(v, ext) {
					return "", errors.New("bytes differ")
				}
				return "", nil
			}
		}
	}
	var want []byte
	for _, m := range vals {
		b, err := p.bytesOf(m)
		if err != nil {
			return "", err
		}
		want = append(want, b...)
	}
	if !bytes.Equal(want, ext) {
		return "", errors.New("bytes differ")
	}
	return "", nil
}

// extType is the IDL type of the single matcher in vals, or "".
func (p *peer) extType(vals []Matcher) string {
	if len(vals) != 1 {
		return ""
	}
	x, ok := vals[0].(*Expression)
	if !ok {
		return ""
	}
	v, err := p.env.Eval(x.X)
	if m, ok := v.(*dynamic.Matcher); ok && err == nil {
		return p.typeName(m)
	}
	return ""
}

// expectedExt renders the expected extension for a message.
func (p *peer) expectedExt(vals []Matcher) string {
	var parts []string
	for _, m := range vals {
		if x, ok := m.(*Expression); ok {
			if v, err := p.env.Eval(x.X); err == nil {
				switch v := v.(type) {
				case *dynamic.Matcher:
					parts = append(parts, v.Root().String())
					continue
				case []byte:
					parts = append(parts, hexString(v))
					continue
				}
			}
		}
		parts = append(parts, m.String())
	}
	return strings.Join(parts, " ")
}

func (p *peer) builtin() *dynamic.Schema {
	p.schemaOnce.Do(func() {
		if p.env.Schema != nil {
			p.schema = p.env.Schema
			return
		}
		p.schema, _ = dynamic.Builtin()
	})
	return p.schema
}

// typeName finds the qualified name of the matcher's type.
func (p *peer) typeName(m *dynamic.Matcher) string {
	s := p.builtin()
	if s == nil {
		return ""
	}
	t := m.Root().Type()
	for _, q := range s.Types() {
		if u, ok := s.Lookup(q); ok && u == t {
			return q
		}
	}
	return ""
}

// describe renders a received frame; typ, when known, decodes its
// extension.
func (p *peer) describe(f frame, typ string) string {
	var b strings.Builder
	b.WriteString(f.kind.String())
	switch f.kind {
	case frameData:
		b.WriteString(" " + quoteBytes(f.payload))
	case frameWindow:
		b.WriteString(" " + strconv.Itoa(f.credit))
	}
	if len(f.ext) > 0 {
		b.WriteString(" ext ")
		if s := p.builtin(); typ != "" && s != nil {
			b.WriteString(s.Format(typ, f.ext))
		} else {
			b.WriteString(hexString(f.ext))
		}
	}
	return b.String()
}

const maxShown = 96

// quoteBytes quotes printable UTF-8 as a string and shows other bytes as
// hex, shortened past maxShown bytes.
func quoteBytes(b []byte) string {
	more := ""
	if len(b) > maxShown {
		b, more = b[:maxShown], fmt.Sprintf("…(%d bytes more)", len(b)-maxShown)
	}
	if utf8.Valid(b) && printable(b) {
		return strconv.Quote(string(b)) + more
	}
	return hexString(b) + more
}

func printable(b []byte) bool {
	for _, r := range string(b) {
		if !strconv.IsPrint(r) && r != '\n' && r != '\r' && r != '\t' {
			return false
		}
	}
	return true
}

func hexString(b []byte) string {
	var s strings.Builder
	s.WriteByte('[')
	for i, c := range b {
		if i > 0 {
			s.WriteByte(' ')
		}
		fmt.Fprintf(&s, "0x%02x", c)
	}
	s.WriteByte(']')
	return s.String()
}
