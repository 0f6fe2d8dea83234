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

	"github.com/dlclark/regexp2"

	"github.com/sluicehq/sluice/idl/dynamic"
)

// stream plays one connection of a script: a connect, or one accepted
// connection of an accept. It owns its connection state; the script's Env
// and the barriers are shared with the script's other streams.
type stream struct {
	sr     *scriptRun
	head   Node // the connect, accept or accepted that began it
	uri    string
	server bool
	opts   streamOptions
	c      conn
	q      *queue

	beginSent bool
	peerBegun bool
	peerBegin frame
	granted   bool  // the initial WINDOW went out
	credit    int64 // what this side may still reserve for DATA
	padding   int   // charged per DATA sent, from the peer's WINDOW
	reset     *frame
	inbound   []frame // DATA, FLUSH, END and ABORT, in order
	off       int     // bytes of inbound[0] already consumed
	backlog   []frame // taken from q but not yet absorbed
	advised   []frame // CHALLENGE and REDIRECT frames against this side's writes
	pending   int64   // update "message": credit owed at the end of a read
	writeExt  map[string][]byte
	readExt   map[string]*ReadExt
	wflags    *uint8 // write option zilla:flags for the next DATA
	rflags    *uint8 // read option zilla:flags for the next DATA
	stopped   bool   // END or ABORT sent, or RESET received: no more writes
	aborted   bool   // RESET or REDIRECT received: the write side was aborted
	windowed  bool   // a WINDOW arrived: the peer took the stream
	readDone  bool   // END or ABORT received, or RESET or REDIRECT sent: no more reads

	// beginCheck is a connect's `read zilla:begin.ext` placed before
	// connected: the reply BEGIN is checked against it when it arrives.
	beginCheck *ReadExt

	// turn orders the opening of a script's connects: a connect opens
	// once the one before it in the script has opened (or stopped short
	// of opening), as k3po opens them in script order as the script
	// starts. nil for a connect that awaits a barrier and for accepts.
	turn *turn
}

// turn is one connect's place in its script's opening order.
type turn struct {
	prev <-chan struct{} // closed when the connect before has had its turn; nil for the first
	done chan struct{}   // closed when this connect has had its turn
	once sync.Once
}

// wait blocks until the connect before has had its turn.
func (t *turn) wait(ctx context.Context) error {
	if t == nil || t.prev == nil {
		return nil
	}
	select {
	case <-t.prev:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release ends this connect's turn; later calls do nothing.
func (t *turn) release() {
	if t != nil {
		t.once.Do(func() { close(t.done) })
	}
}

func newStream(sr *scriptRun, head Node, uri string, server bool, opts streamOptions) *stream {
	return &stream{
		sr: sr, head: head, uri: uri, server: server, opts: opts,
		writeExt: map[string][]byte{},
		readExt:  map[string]*ReadExt{},
	}
}

func (s *stream) attach(c conn) {
	s.c, s.q = c, c.inbox()
}

// failf formats a failure at n's line, with an excerpt of the script.
func (s *stream) failf(n Node, format string, args ...any) error {
	return s.sr.failf(n, format, args...)
}

func (s *stream) unsupported(n Node, what string) error {
	return s.sr.unsupported(n, what)
}

func (s *stream) send(ctx context.Context, n Node, f frame) error {
	f.authorization = s.opts.authorization
	if t := s.sr.play.trace; t != nil {
		t(s.sr.script.File, false, f)
	}
	if err := s.c.send(ctx, f); err != nil {
		if ctx.Err() != nil {
			return s.sr.ctxErr(ctx, n, "room to send "+f.kind.String())
		}
		return s.failf(n, "sending %s: %v", f.kind, err)
	}
	return nil
}

// sendWindow grants the peer credit bytes more.
func (s *stream) sendWindow(ctx context.Context, n Node, credit int64) error {
	return s.send(ctx, n, frame{
		kind: frameWindow, credit: credit, padding: s.opts.padding,
		budgetID: s.opts.budgetID, capabilities: s.opts.capabilities,
	})
}

// grantInitial sends the first WINDOW, unless the update mode is none.
func (s *stream) grantInitial(ctx context.Context, n Node) error {
	if s.granted {
		return nil
	}
	s.granted = true
	if s.opts.update == "none" {
		return nil
	}
	return s.sendWindow(ctx, n, s.opts.window)
}

// consumed reports n bytes (payload and padding) read by the script.
func (s *stream) consumed(ctx context.Context, n Node, bytes int64) error {
	if bytes <= 0 {
		return nil
	}
	switch s.opts.update {
	case "stream":
		return s.sendWindow(ctx, n, bytes)
	case "message":
		s.pending += bytes
	}
	return nil
}

// flushPending sends the credit owed in update mode "message".
func (s *stream) flushPending(ctx context.Context, n Node) error {
	if s.pending == 0 {
		return nil
	}
	p := s.pending
	s.pending = 0
	return s.sendWindow(ctx, n, p)
}

// absorb takes in one frame from the peer.
func (s *stream) absorb(ctx context.Context, n Node, f frame) error {
	if t := s.sr.play.trace; t != nil {
		t(s.sr.script.File, true, f)
	}
	switch f.kind {
	case frameBegin:
		s.peerBegun, s.peerBegin = true, f
		if c := s.beginCheck; c != nil {
			s.beginCheck = nil
			if err := s.checkBegin(c); err != nil {
				return err
			}
		}
		if !s.server {
			// A connect grants the reply its window as soon as it begins;
			// an accept waits for connected (seed 000: advisories written
			// before connected go out before the WINDOW).
			return s.grantInitial(ctx, n)
		}
	case frameWindow:
		s.windowed = true
		s.credit += f.credit
		s.padding = f.padding
	case frameReset:
		s.reset = &f
		s.stopped, s.aborted = true, true
	case frameChallenge:
		s.advised = append(s.advised, f)
	case frameRedirect:
		// A redirect ends the write side, as k3po's transport aborts its
		// output on one.
		s.advised = append(s.advised, f)
		s.stopped, s.aborted = true, true
	case frameData:
		s.inbound = append(s.inbound, f)
		if s.opts.update == "proactive" && s.granted {
			return s.sendWindow(ctx, n, int64(f.reserved))
		}
	default:
		if f.kind == frameEnd || f.kind == frameAbort {
			s.readDone = true
		}
		s.inbound = append(s.inbound, f)
	}
	return nil
}

// wait absorbs frames, one at a time and in order, until ready returns
// true; wake, when not nil, is also waited on (a barrier). Frames after
// the one that made it ready stay in the backlog, so a wait sees the
// state as it was at that frame, as k3po's transport handles each frame
// as it arrives (a WINDOW releases a write before a RESET behind it
// aborts the stream).
func (s *stream) wait(ctx context.Context, n Node, what string, wake <-chan struct{}, ready func() bool) error {
	for {
		if ready() {
			return nil
		}
		if s.q != nil && len(s.backlog) == 0 {
			s.backlog = s.q.take()
		}
		if len(s.backlog) > 0 {
			f := s.backlog[0]
			s.backlog = s.backlog[1:]
			if err := s.absorb(ctx, n, f); err != nil {
				return err
			}
			continue
		}
		var in <-chan struct{}
		if s.q != nil {
			in = s.q.ready
		}
		select {
		case <-in:
		case <-wake:
			wake = nil
		case <-ctx.Done():
			return s.sr.ctxErr(ctx, n, what)
		}
	}
}

// drain absorbs every frame that has arrived, without waiting.
func (s *stream) drain(ctx context.Context, n Node) error {
	if s.q != nil {
		s.backlog = append(s.backlog, s.q.take()...)
	}
	for len(s.backlog) > 0 {
		f := s.backlog[0]
		s.backlog = s.backlog[1:]
		if err := s.absorb(ctx, n, f); err != nil {
			return err
		}
	}
	return nil
}

func (s *stream) awaitBarrier(ctx context.Context, n Node, name string) error {
	// A connect that waits on a barrier before opening lets the next one
	// open meanwhile, which that barrier may depend on.
	s.turn.release()
	ch := s.sr.play.bars.get(name)
	return s.wait(ctx, n, "barrier "+name, ch, func() bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	})
}

// run plays cmds, the commands of this stream. k3po opens every connect
// as its script starts, so a connect whose commands never needed the
// stream (only a write zilla:begin.ext, say) still sends its BEGIN at the
// end; and a `read zilla:begin.ext` still unchecked then waits for the
// BEGIN it describes, as k3po does not complete a script while one of its
// handlers is pending.
func (s *stream) run(ctx context.Context, cmds []Command) error {
	for _, cmd := range cmds {
		if err := s.exec(ctx, cmd); err != nil {
			return err
		}
	}
	if !s.server {
		if err := s.ensureBegin(ctx, s.head); err != nil {
			return err
		}
	}
	if c := s.beginCheck; c != nil && s.c != nil {
		return s.readBeginExt(ctx, c)
	}
	return nil
}

func (s *stream) exec(ctx context.Context, cmd Command) error {
	if !s.server && s.c == nil && needsConnection(cmd) {
		// k3po opens a connect as its script starts; Sluice opens it at
		// connected, or at the first command before it that needs the
		// stream, so that begin extensions and options written before
		// connected still go on the BEGIN.
		if err := s.ensureBegin(ctx, cmd); err != nil {
			return err
		}
	}
	if hc, ok := s.c.(*httpConn); ok {
		if done, err := hc.exec(ctx, s, cmd); done {
			return err
		}
	}
	switch c := cmd.(type) {
	case *Connected:
		return s.connected(ctx, c)
	case *ConnectAborted:
		return s.connectAborted(ctx, c)
	case *Write:
		b, err := s.sr.concat(c.Values)
		if err != nil {
			return s.failf(c, "%v", err)
		}
		return s.writeData(ctx, c, b)
	case *WriteDataEmpty:
		return s.writeData(ctx, c, []byte{})
	case *Read:
		return s.read(ctx, c)
	case *ReadDataEmpty:
		return s.readEmpty(ctx, c, false)
	case *ReadDataNull:
		return s.readEmpty(ctx, c, true)
	case *WriteExt:
		return s.setWriteExt(c)
	case *ReadExt:
		if c.Missing {
			return s.unsupported(c, fmt.Sprintf("command %q", commandName(c)+" missing"))
		}
		if c.Kind == "begin" {
			if !s.server && s.c == nil {
				// Before connected it says what the reply BEGIN must carry.
				s.beginCheck = c
				return nil
			}
			return s.readBeginExt(ctx, c)
		}
		s.readExt[c.Kind] = c
		return nil
	case *WriteOption:
		return s.writeOption(ctx, c)
	case *ReadOption:
		return s.readOption(ctx, c)
	case *WriteFlush:
		return s.writeFlush(ctx, c)
	case *Close:
		return s.close(ctx, c)
	case *ConnectAbort:
		return s.connectAbort(ctx, c)
	case *WriteAdvise:
		if c.Kind != "zilla:flush" {
			return s.unsupported(c, fmt.Sprintf("command %q", commandName(c)))
		}
		ext, err := s.sr.concat(c.Values)
		if err != nil {
			return s.failf(c, "%v", err)
		}
		if s.stopped {
			return s.failf(c, "cannot send FLUSH: the stream is already closed")
		}
		// k3po's transport sends the FLUSH as it is, without forcing out a
		// deferred BEGIN: a half-duplex accept may advise (an HTTP/2 push
		// promise) before its reply begins.
		return s.send(ctx, c, frame{kind: frameFlush, ext: ext})
	case *ReadAdvised:
		if c.Kind != "zilla:flush" || c.Missing {
			return s.unsupported(c, fmt.Sprintf("command %q", commandName(c)))
		}
		return s.readFrame(ctx, c, frameFlush, c.Values)
	case *ReadAdvise:
		if c.Kind != "zilla:challenge" && c.Kind != "zilla:redirect" {
			return s.unsupported(c, fmt.Sprintf("command %q", commandName(c)))
		}
		ext, err := s.sr.concat(c.Values)
		if err != nil {
			return s.failf(c, "%v", err)
		}
		if !s.peerBegun {
			return s.failf(c, "read advise %s before the peer's BEGIN arrived", c.Kind)
		}
		if c.Kind == "zilla:redirect" {
			return s.redirect(ctx, c, ext)
		}
		return s.send(ctx, c, frame{kind: frameChallenge, ext: ext})
	case *WriteAdvised:
		if (c.Kind != "zilla:challenge" && c.Kind != "zilla:redirect") || c.Missing {
			return s.unsupported(c, fmt.Sprintf("command %q", commandName(c)))
		}
		return s.writeAdvised(ctx, c)
	case *WriteClose:
		return s.sendClosing(ctx, c, frameEnd, "end")
	case *WriteAbort:
		return s.writeAbort(ctx, c)
	case *Closed:
		return s.closed(ctx, c)
	case *ReadClosed:
		return s.readFrame(ctx, c, frameEnd, s.takeReadExt("end"))
	case *ReadAborted:
		return s.readFrame(ctx, c, frameAbort, s.takeReadExt("abort"))
	case *ReadAbort:
		return s.sendReset(ctx, c)
	case *WriteAborted:
		return s.writeAborted(ctx, c)
	case *ReadNotify:
		s.sr.play.bars.notify(c.Barrier)
		return nil
	case *WriteNotify:
		s.sr.play.bars.notify(c.Barrier)
		return nil
	case *ReadAwait:
		return s.awaitBarrier(ctx, c, c.Barrier)
	case *WriteAwait:
		return s.awaitBarrier(ctx, c, c.Barrier)
	}
	return s.unsupported(cmd, fmt.Sprintf("command %q", commandName(cmd)))
}

// needsConnection reports whether cmd acts on a connect's stream, rather
// than configuring it, ordering it by barriers or opening it itself.
func needsConnection(cmd Command) bool {
	switch cmd.(type) {
	case *WriteExt, *ReadExt, *WriteOption, *ReadOption, *ReadNotify, *WriteNotify,
		*ReadAwait, *WriteAwait, *Connected, *ConnectAborted, *ConnectAbort, *WriteFlush, *Close:
		return false
	}
	return true
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

func (s *stream) writeOption(_ context.Context, c *WriteOption) error {
	v, err := s.sr.evalValue(c.Value)
	if err != nil {
		return s.failf(c, "%v", err)
	}
	if c.Name != "zilla:flags" {
		return s.unsupported(c, fmt.Sprintf("command %q", commandName(c)))
	}
	flags, auto, err := parseFlags(v)
	if err != nil {
		return s.failf(c, "%v", err)
	}
	s.wflags = &flags
	if auto {
		s.wflags = nil
	}
	return nil
}

func (s *stream) readOption(ctx context.Context, c *ReadOption) error {
	v, err := s.sr.evalValue(c.Value)
	if err != nil {
		return s.failf(c, "%v", err)
	}
	switch c.Name {
	case "zilla:flags":
		flags, auto, err := parseFlags(v)
		if err != nil {
			return s.failf(c, "%v", err)
		}
		s.rflags = &flags
		if auto {
			s.rflags = nil
		}
		return nil
	case "zilla:window", "zilla:ack":
		// Grant (window) or acknowledge (ack) n more bytes now, whatever
		// the update mode: with update "none" this is how a script
		// releases a writer it has blocked.
		n, err := nonNegative(c.Name, v)
		if err != nil {
			return s.failf(c, "%v", err)
		}
		s.granted = true
		return s.sendWindow(ctx, c, n)
	}
	return s.unsupported(c, fmt.Sprintf("command %q", commandName(c)))
}

func (s *stream) takeReadExt(kind string) []Matcher {
	re := s.readExt[kind]
	delete(s.readExt, kind)
	if re == nil {
		return nil
	}
	return re.Values
}

// ensureBegin sends this side's BEGIN if it has not gone out yet, opening
// a connect that a command before connected needs.
func (s *stream) ensureBegin(ctx context.Context, n Node) error {
	if s.beginSent {
		return nil
	}
	if !s.server {
		if err := s.dial(ctx, n); err != nil {
			return err
		}
	}
	if s.server {
		if s.opts.transmission == "simplex" {
			return s.failf(n, "cannot write on a simplex accept: only the connect side writes")
		}
		if err := s.grantInitial(ctx, n); err != nil {
			return err
		}
	}
	ext := s.writeExt["begin"]
	delete(s.writeExt, "begin")
	s.beginSent = true
	defer s.turn.release()
	return s.send(ctx, n, frame{kind: frameBegin, ext: ext, affinity: s.opts.affinity})
}

func (s *stream) dial(ctx context.Context, n Node) error {
	if s.c != nil {
		return nil
	}
	if err := s.turn.wait(ctx); err != nil {
		return s.sr.ctxErr(ctx, n, "the connect before it in the script to open")
	}
	c, err := s.sr.play.net.dial(ctx, s.uri, &s.opts)
	if err != nil {
		if ctx.Err() != nil {
			return s.sr.ctxErr(ctx, n, "a stream accepting "+s.uri)
		}
		return s.failf(n, "connect %s: %v", s.uri, err)
	}
	s.attach(c)
	return nil
}

func (s *stream) connected(ctx context.Context, c *Connected) error {
	if !s.server {
		if err := s.dial(ctx, c); err != nil {
			return err
		}
		if err := s.ensureBegin(ctx, c); err != nil {
			return err
		}
		if s.opts.transmission != "duplex" {
			return nil
		}
		if err := s.wait(ctx, c, "BEGIN", nil, func() bool { return s.peerBegun || s.reset != nil }); err != nil {
			return err
		}
		if !s.peerBegun {
			return s.failf(c, "expected BEGIN, observed %s", s.describe(*s.reset, ""))
		}
		return nil
	}
	if err := s.grantInitial(ctx, c); err != nil {
		return err
	}
	if s.opts.transmission != "duplex" {
		return nil
	}
	return s.ensureBegin(ctx, c)
}

// connectAborted expects the peer to refuse the connect with RESET.
func (s *stream) connectAborted(ctx context.Context, c *ConnectAborted) error {
	if err := s.dial(ctx, c); err != nil {
		return err
	}
	if err := s.ensureBegin(ctx, c); err != nil {
		return err
	}
	if err := s.wait(ctx, c, "RESET", nil, func() bool { return s.peerBegun || s.reset != nil }); err != nil {
		return err
	}
	if s.reset == nil {
		return s.failf(c, "expected RESET, observed %s", s.describe(s.peerBegin, ""))
	}
	vals := s.takeReadExt("reset")
	if typ, err := s.sr.checkExt(vals, s.reset.ext); err != nil {
		return s.failf(c, "expected RESET with extension %s (%v), observed %s", s.sr.expectedExt(vals), err, s.describe(*s.reset, typ))
	}
	return nil
}

func (s *stream) setWriteExt(c *WriteExt) error {
	if c.Kind == "begin" && s.beginSent {
		return s.failf(c, "write zilla:begin.ext after the BEGIN was sent; write it before connected")
	}
	b, err := s.sr.concat(c.Values)
	if err != nil {
		return s.failf(c, "%v", err)
	}
	s.writeExt[c.Kind] = b
	return nil
}

// sendFrame sends a FLUSH, END or ABORT after the BEGIN.
func (s *stream) sendFrame(ctx context.Context, n Node, f frame) error {
	if err := s.ensureBegin(ctx, n); err != nil {
		return err
	}
	if s.stopped {
		return s.failf(n, "cannot send %s: the stream is already closed", f.kind)
	}
	return s.send(ctx, n, f)
}

func (s *stream) sendClosing(ctx context.Context, n Node, kind frameKind, extKind string) error {
	ext := s.writeExt[extKind]
	delete(s.writeExt, extKind)
	if err := s.sendFrame(ctx, n, frame{kind: kind, ext: ext}); err != nil {
		return err
	}
	s.stopped = true
	return nil
}

// writeAbort sends ABORT, or nothing when the peer has already aborted
// the write side with RESET or REDIRECT, as k3po's transport treats an
// abort of an aborted output as done.
func (s *stream) writeAbort(ctx context.Context, c *WriteAbort) error {
	if err := s.drain(ctx, c); err != nil {
		return err
	}
	if s.aborted {
		return nil
	}
	return s.sendClosing(ctx, c, frameAbort, "abort")
}

// closed waits for k3po's closed event: both sides of the stream done,
// the write side by END, ABORT or RESET, the read side by END, ABORT,
// RESET or REDIRECT.
func (s *stream) closed(ctx context.Context, c *Closed) error {
	if s.c == nil {
		return s.failf(c, "closed before the stream was opened")
	}
	return s.wait(ctx, c, "the stream to close", nil, func() bool { return s.stopped && s.readDone })
}

// waitCredit waits until need bytes may be reserved, or fails on RESET.
// The padding is read at each check: a WINDOW that arrives meanwhile may
// change it.
func (s *stream) waitCredit(ctx context.Context, n Node, payload int64, what string) error {
	err := s.wait(ctx, n, what, nil, func() bool { return s.credit >= int64(s.padding)+payload || s.reset != nil })
	if err != nil {
		return err
	}
	if s.reset != nil {
		return s.failf(n, "expected %s, observed %s", what, s.describe(*s.reset, ""))
	}
	return nil
}

// writeData sends b as DATA frames within the credit granted, following
// the throttle mode: "stream" splits b across the credit as it comes,
// "message" waits until b fits in one frame, "none" ignores credit. An
// explicit write option zilla:flags sends b as one frame with those flags.
func (s *stream) writeData(ctx context.Context, n Node, b []byte) error {
	if err := s.ensureBegin(ctx, n); err != nil {
		return err
	}
	ext := s.writeExt["data"]
	delete(s.writeExt, "data")
	flags := s.wflags
	s.wflags = nil
	whole := s.opts.throttle == "message" || flags != nil || len(b) == 0
	first := true
	for first || len(b) > 0 {
		if s.stopped {
			return s.failf(n, "cannot send DATA: the stream is already closed")
		}
		size := len(b)
		room := s.c.maxData(len(ext))
		if !first {
			room = s.c.maxData(0)
		}
		if whole && size > room {
			return s.failf(n, "cannot send DATA of %d bytes: one frame holds at most %d", size, room)
		}
		if s.opts.throttle != "none" {
			payload := int64(1)
			if whole {
				payload = int64(len(b))
			}
			if int64(s.padding)+payload > 0 {
				what := fmt.Sprintf("WINDOW to send %d bytes", len(b))
				if err := s.waitCredit(ctx, n, payload, what); err != nil {
					return err
				}
			}
			if !whole {
				size = min(len(b), int(s.credit)-s.padding)
			}
		}
		if size > room {
			size = max(room, 1)
		}
		f := frame{kind: frameData, payload: bytes.Clone(b[:size]), reserved: size + s.padding, budgetID: s.opts.budgetID}
		switch {
		case flags != nil:
			f.flags = *flags
		default:
			if first {
				f.flags |= flagInit
			}
			if size == len(b) {
				f.flags |= flagFin
			}
		}
		if first {
			f.ext = ext
		}
		if err := s.send(ctx, n, f); err != nil {
			return err
		}
		s.credit -= int64(f.reserved)
		b = b[size:]
		first = false
	}
	return nil
}

func (s *stream) writeAborted(ctx context.Context, c *WriteAborted) error {
	if err := s.wait(ctx, c, "RESET", nil, func() bool { return s.reset != nil }); err != nil {
		return err
	}
	vals := s.takeReadExt("reset")
	if typ, err := s.sr.checkExt(vals, s.reset.ext); err != nil {
		return s.failf(c, "expected RESET with extension %s (%v), observed %s", s.sr.expectedExt(vals), err, s.describe(*s.reset, typ))
	}
	return nil
}

// writeAdvised expects the next advisory against this side's writes to be
// a CHALLENGE (zilla:challenge), whose extension the values match, or a
// REDIRECT (zilla:redirect), whose affinity they match as 8 big-endian
// bytes, as k3po's transport hands a redirect's affinity to the script.
func (s *stream) writeAdvised(ctx context.Context, c *WriteAdvised) error {
	kind := frameChallenge
	if c.Kind == "zilla:redirect" {
		kind = frameRedirect
	}
	if err := s.wait(ctx, c, kind.String(), nil, func() bool { return len(s.advised) > 0 || s.reset != nil }); err != nil {
		return err
	}
	if len(s.advised) == 0 {
		return s.failf(c, "expected %s, observed %s", kind, s.describe(*s.reset, ""))
	}
	f := s.advised[0]
	if f.kind != kind {
		return s.failf(c, "expected %s, observed %s", kind, s.describe(f, ""))
	}
	s.advised = s.advised[1:]
	got := f.ext
	if kind == frameRedirect {
		got = binary.BigEndian.AppendUint64(nil, uint64(f.affinity))
	}
	if typ, err := s.sr.checkExt(c.Values, got); err != nil {
		return s.failf(c, "expected %s with extension %s (%v), observed %s", kind, s.sr.expectedExt(c.Values), err, s.describe(f, typ))
	}
	return nil
}

// redirect answers the peer's BEGIN with a REDIRECT, as k3po's
// `read advise zilla:redirect` does: its affinity is the advisory's value
// when that is 8 bytes (big-endian), and its extension the BEGIN's own.
// The read side is then done.
func (s *stream) redirect(ctx context.Context, c *ReadAdvise, value []byte) error {
	var affinity int64
	if len(value) == 8 {
		affinity = int64(binary.BigEndian.Uint64(value))
	}
	s.readDone = true
	return s.send(ctx, c, frame{kind: frameRedirect, affinity: affinity, ext: s.peerBegin.ext})
}

// writeFlush plays `write flush` as k3po's zilla transport does: no frame
// of its own, it sends a deferred BEGIN and, when a `write zilla:data.ext`
// is pending with no data to carry it, a DATA with a null payload and that
// extension. Writes are never held back here, so there are none to push.
func (s *stream) writeFlush(ctx context.Context, c *WriteFlush) error {
	if s.stopped || (s.server && s.opts.transmission == "simplex") {
		return nil
	}
	if err := s.ensureBegin(ctx, c); err != nil {
		return err
	}
	if _, ok := s.writeExt["data"]; ok {
		return s.writeData(ctx, c, nil)
	}
	return nil
}

// sendReset refuses the rest of the peer's data with RESET, carrying a
// pending `write zilla:reset.ext`.
func (s *stream) sendReset(ctx context.Context, n Node) error {
	ext := s.writeExt["reset"]
	delete(s.writeExt, "reset")
	s.readDone = true
	return s.send(ctx, n, frame{kind: frameReset, ext: ext})
}

// close plays k3po's `close`: END on the write side (sending a deferred
// BEGIN first) unless it is already closed, and RESET on the read side
// unless END or ABORT has already arrived there.
func (s *stream) close(ctx context.Context, c *Close) error {
	if s.c == nil {
		return nil
	}
	// Take in what has arrived, so a pending END counts as read closed.
	if err := s.drain(ctx, c); err != nil {
		return err
	}
	if !s.stopped {
		if err := s.sendClosing(ctx, c, frameEnd, "end"); err != nil {
			return err
		}
	}
	if s.readDone {
		return nil
	}
	return s.sendReset(ctx, c)
}

// connectAbort plays `connect abort`: the connect's BEGIN goes out (with
// any pending begin extension) and ABORT follows at once, as k3po's
// transport does when the connect is canceled.
func (s *stream) connectAbort(ctx context.Context, c *ConnectAbort) error {
	if err := s.ensureBegin(ctx, c); err != nil {
		return err
	}
	if s.stopped {
		return nil
	}
	s.stopped = true
	return s.send(ctx, c, frame{kind: frameAbort})
}

func (s *stream) readBeginExt(ctx context.Context, c *ReadExt) error {
	if s.c == nil {
		return s.failf(c, "read zilla:begin.ext before the stream was connected")
	}
	s.beginCheck = nil
	// A RESET after the peer's WINDOW only aborts this side's writes; the
	// peer's BEGIN may still follow (a half-duplex reply), so only a RESET
	// refusing the stream outright ends the wait.
	if err := s.wait(ctx, c, "BEGIN", nil, func() bool { return s.peerBegun || (s.reset != nil && !s.windowed) }); err != nil {
		return err
	}
	if !s.peerBegun {
		return s.failf(c, "expected BEGIN, observed %s", s.describe(*s.reset, ""))
	}
	return s.checkBegin(c)
}

// checkBegin checks the peer's BEGIN against a read zilla:begin.ext.
func (s *stream) checkBegin(c *ReadExt) error {
	if typ, err := s.sr.checkExt(c.Values, s.peerBegin.ext); err != nil {
		return s.failf(c, "expected BEGIN with extension %s (%v), observed %s", s.sr.expectedExt(c.Values), err, s.describe(s.peerBegin, typ))
	}
	return nil
}

// next waits for the next inbound frame.
func (s *stream) next(ctx context.Context, n Node, what string) (frame, error) {
	if err := s.wait(ctx, n, what, nil, func() bool { return len(s.inbound) > 0 }); err != nil {
		return frame{}, err
	}
	f := s.inbound[0]
	if f.kind == frameData && s.off > 0 {
		f.payload = f.payload[s.off:]
	}
	return f, nil
}

// pop consumes inbound[0] and returns the credit it frees.
func (s *stream) pop() int64 {
	f := s.inbound[0]
	s.inbound, s.off = s.inbound[1:], 0
	if f.kind == frameData {
		return int64(f.reserved - len(f.payload))
	}
	return 0
}

// readFrame expects the next inbound frame to be of kind, with an
// extension matching vals (when not empty).
func (s *stream) readFrame(ctx context.Context, n Node, kind frameKind, vals []Matcher) error {
	f, err := s.next(ctx, n, kind.String())
	if err != nil {
		return err
	}
	typ := s.sr.extType(vals)
	if f.kind != kind {
		return s.failf(n, "expected %s, observed %s", kind, s.describe(f, typ))
	}
	s.pop()
	if typ, err := s.sr.checkExt(vals, f.ext); err != nil {
		return s.failf(n, "expected %s with extension %s (%v), observed %s", kind, s.sr.expectedExt(vals), err, s.describe(f, typ))
	}
	return nil
}

// readEmpty expects a DATA with an empty payload (or, when null, none).
func (s *stream) readEmpty(ctx context.Context, n Node, null bool) error {
	what := "DATA with an empty payload"
	if null {
		what = "DATA with a null payload"
	}
	f, err := s.next(ctx, n, what)
	if err != nil {
		return err
	}
	if f.kind != frameData || len(f.payload) != 0 || (f.payload == nil) != null || s.off > 0 {
		return s.failf(n, "expected %s, observed %s", what, s.describe(f, ""))
	}
	if err := s.checkDataFrame(n, f); err != nil {
		return err
	}
	if err := s.consumed(ctx, n, s.pop()); err != nil {
		return err
	}
	return s.flushPending(ctx, n)
}

// checkDataFrame checks a DATA frame read from its start against the
// pending read zilla:data.ext and read option zilla:flags.
func (s *stream) checkDataFrame(n Node, f frame) error {
	if vals := s.takeReadExt("data"); vals != nil {
		if typ, err := s.sr.checkExt(vals, f.ext); err != nil {
			return s.failf(n, "expected DATA with extension %s (%v), observed %s", s.sr.expectedExt(vals), err, s.describe(f, typ))
		}
	}
	if s.rflags != nil {
		want := *s.rflags
		s.rflags = nil
		if f.flags != want {
			return s.failf(n, "expected DATA with flags 0x%02x, observed %s", want, s.describe(f, ""))
		}
	}
	return nil
}

// readBytes consumes up to len(want) bytes (exactly n when want is nil)
// from the inbound DATA, returning what it got; it fails as soon as the
// bytes differ from want or a frame other than DATA comes first.
func (s *stream) readBytes(ctx context.Context, n Node, count int, want []byte, expected string) ([]byte, error) {
	var got []byte
	for len(got) < count {
		what := expected
		if len(got) > 0 {
			what = fmt.Sprintf("%s (%d of %d bytes received)", expected, len(got), count)
		}
		f, err := s.next(ctx, n, what)
		if err != nil {
			return nil, err
		}
		if f.kind != frameData {
			obs := s.describe(f, "")
			if len(got) > 0 {
				obs = fmt.Sprintf("DATA %s then %s", quoteBytes(got), obs)
			}
			return nil, s.failf(n, "expected %s, observed %s", expected, obs)
		}
		if s.off == 0 {
			if err := s.checkDataFrame(n, f); err != nil {
				return nil, err
			}
		}
		take := min(len(f.payload), count-len(got))
		got = append(got, f.payload[:take]...)
		if want != nil && !bytes.Equal(got, want[:len(got)]) {
			return nil, s.failf(n, "expected %s, observed DATA %s", expected, quoteBytes(got))
		}
		s.off += take
		freed := int64(take)
		if take == len(f.payload) {
			freed += s.pop()
		}
		if err := s.consumed(ctx, n, freed); err != nil {
			return nil, err
		}
	}
	return got, nil
}

// read expects the next inbound bytes to match the operands in order:
// literals and expressions compare equal, [0..N] and captures take that
// many bytes, and a regex matches the bytes that follow.
func (s *stream) read(ctx context.Context, c *Read) error {
	for i, m := range c.Values {
		if err := s.readOne(ctx, c, m, i == 0 && len(c.Values) == 1); err != nil {
			return err
		}
	}
	return s.flushPending(ctx, c)
}

func (s *stream) readOne(ctx context.Context, c *Read, m Matcher, only bool) error {
	switch m := m.(type) {
	case *Text, *Bytes, *Number, *Expression:
		want, err := s.sr.bytesOf(m)
		if err != nil {
			return s.failf(c, "%v", err)
		}
		expected := "DATA " + quoteBytes(want)
		if len(want) == 0 && only {
			// An empty read consumes one empty DATA frame.
			f, err := s.next(ctx, c, expected)
			if err != nil {
				return err
			}
			if f.kind != frameData || len(f.payload) != 0 {
				return s.failf(c, "expected %s, observed %s", expected, s.describe(f, ""))
			}
			if err := s.checkDataFrame(c, f); err != nil {
				return err
			}
			return s.consumed(ctx, c, s.pop())
		}
		_, err = s.readBytes(ctx, c, len(want), want, expected)
		return err
	case *FixedBytes:
		got, err := s.readBytes(ctx, c, m.Length, nil, fmt.Sprintf("%d bytes of DATA", m.Length))
		if err == nil && m.Capture != "" {
			s.sr.capture(m.Capture, got)
		}
		return err
	case *VariableBytes:
		v, err := s.sr.eval(m.Length.X)
		if err != nil {
			return s.failf(c, "%v", err)
		}
		count, err := integer("length", v)
		if err != nil || count < 0 {
			return s.failf(c, "[0..${%s}]: want a non-negative length, got %s", m.Length.Src, describeValue(v))
		}
		got, err := s.readBytes(ctx, c, int(count), nil, fmt.Sprintf("%d bytes of DATA", count))
		if err == nil && m.Capture != "" {
			s.sr.capture(m.Capture, got)
		}
		return err
	case *NumberCapture:
		size := m.Kind.Size()
		got, err := s.readBytes(ctx, c, size, nil, fmt.Sprintf("a %s (%d bytes of DATA)", m.Kind, size))
		if err != nil {
			return err
		}
		var buf [8]byte
		copy(buf[8-size:], got)
		u := binary.BigEndian.Uint64(buf[:])
		shift := 64 - 8*size
		s.sr.capture(m.Capture, int64(u<<shift)>>shift)
		return nil
	case *Regex:
		return s.readRegex(ctx, c, m)
	}
	return s.unsupported(m, fmt.Sprintf("read operand %s", m))
}

// readRegex matches the regex against the DATA that follows, waiting for
// more while no prefix of the buffered bytes matches, and consumes the
// match. Named groups are captured.
func (s *stream) readRegex(ctx context.Context, c *Read, m *Regex) error {
	re, err := regexp2.Compile(`\A(?:`+m.Pattern+`)`, regexp2.None)
	if err != nil {
		return s.failf(m, "regex /%s/: %v", m.Pattern, err)
	}
	expected := "DATA matching /" + m.Pattern + "/"
	for {
		// The bytes buffered so far, up to the first non-DATA frame.
		var avail []byte
		more := true
		off := s.off
		for _, f := range s.inbound {
			if f.kind != frameData {
				more = false
				break
			}
			avail = append(avail, f.payload[off:]...)
			off = 0
		}
		match, err := re.FindStringMatch(string(avail))
		if err != nil {
			return s.failf(m, "regex /%s/: %v", m.Pattern, err)
		}
		if match != nil && (len(avail) > 0 || !more) {
			if _, err := s.readBytes(ctx, c, len([]byte(match.String())), []byte(match.String()), expected); err != nil {
				return err
			}
			for _, name := range m.Groups {
				if g := match.GroupByName(name); g != nil {
					s.sr.capture(name, []byte(g.String()))
				}
			}
			return nil
		}
		if !more {
			obs := s.describe(s.inbound[len(s.inbound)-1], "")
			if len(avail) > 0 {
				obs = fmt.Sprintf("DATA %s then %s", quoteBytes(avail), obs)
			}
			return s.failf(c, "expected %s, observed %s", expected, obs)
		}
		have := len(s.inbound)
		what := expected
		if len(avail) > 0 {
			what = fmt.Sprintf("%s (have %s)", expected, quoteBytes(avail))
		}
		if err := s.wait(ctx, c, what, nil, func() bool { return len(s.inbound) > have }); err != nil {
			return err
		}
	}
}

// describe renders a received frame; typ, when known, decodes its
// extension.
func (s *stream) describe(f frame, typ string) string {
	return s.sr.describe(f, typ)
}

// scriptRun is one script being played: its Env (shared by its streams
// and guarded by mu) and its source for excerpts.
type scriptRun struct {
	script *Script
	src    []byte
	play   *play
	env    *Env
	envMu  chan struct{} // a lock that is also fine across goroutines
	schema *dynamic.Schema
}

func (sr *scriptRun) lock()   { sr.envMu <- struct{}{} }
func (sr *scriptRun) unlock() { <-sr.envMu }

func (sr *scriptRun) eval(x Expr) (any, error) {
	sr.lock()
	defer sr.unlock()
	return sr.env.Eval(x)
}

func (sr *scriptRun) capture(name string, v any) {
	sr.lock()
	defer sr.unlock()
	sr.env.Properties[name] = v
}

func (sr *scriptRun) evalValue(v Value) (any, error) {
	switch v := v.(type) {
	case *Text:
		return v.Text, nil
	case *Bytes:
		return v.Bytes, nil
	case *Number:
		return v.Value, nil
	case *Expression:
		return sr.eval(v.X)
	}
	return nil, fmt.Errorf("unsupported value %s", v)
}

func (sr *scriptRun) evalString(v Value) (string, error) {
	x, err := sr.evalValue(v)
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
func (sr *scriptRun) bytesOf(n Node) ([]byte, error) {
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
		x, err := sr.eval(v.X)
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

func (sr *scriptRun) concat(vals []Value) ([]byte, error) {
	var out []byte
	for _, v := range vals {
		b, err := sr.bytesOf(v)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return out, nil
}

// failf formats a failure at n's line, with an excerpt of the script.
func (sr *scriptRun) failf(n Node, format string, args ...any) error {
	line := n.Position().Line
	msg := fmt.Sprintf("%s:%d: %s", sr.script.File, line, fmt.Sprintf(format, args...))
	if ex := Excerpt(sr.src, line, 2); ex != "" {
		msg += "\n" + strings.TrimSuffix(ex, "\n")
	}
	return errors.New(msg)
}

func (sr *scriptRun) unsupported(n Node, what string) error {
	line := n.Position().Line
	msg := fmt.Sprintf("unsupported %s at %s:%d", what, sr.script.File, line)
	if ex := Excerpt(sr.src, line, 2); ex != "" {
		msg += "\n" + strings.TrimSuffix(ex, "\n")
	}
	return errors.New(msg)
}

func (sr *scriptRun) ctxErr(ctx context.Context, n Node, what string) error {
	if errors.Is(context.Cause(ctx), errPeerFailed) {
		return errPeerFailed
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return sr.failf(n, "timed out waiting for %s", what)
	}
	return sr.failf(n, "canceled waiting for %s: %v", what, context.Cause(ctx))
}

// checkExt checks ext against the expected values: a single
// *dynamic.Matcher is matched, anything else compares as bytes. No values
// accepts any extension. typ is the IDL type of the matcher, or "".
func (sr *scriptRun) checkExt(vals []Matcher, ext []byte) (typ string, err error) {
	if len(vals) == 0 {
		return "", nil
	}
	if len(vals) == 1 {
		if x, ok := vals[0].(*Expression); ok {
			v, err := sr.eval(x.X)
			if err != nil {
				return "", err
			}
			switch v := v.(type) {
			case *dynamic.Matcher:
				return sr.typeName(v), v.Match(ext)
			case []byte:
				if !bytes.Equal(v, ext) {
					return sr.diffExt(x.X, v, ext)
				}
				return "", nil
			}
		}
	}
	var want []byte
	for _, m := range vals {
		b, err := sr.bytesOf(m)
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
func (sr *scriptRun) extType(vals []Matcher) string {
	if len(vals) != 1 {
		return ""
	}
	x, ok := vals[0].(*Expression)
	if !ok {
		return ""
	}
	v, err := sr.eval(x.X)
	if m, ok := v.(*dynamic.Matcher); ok && err == nil {
		return sr.typeName(m)
	}
	return ""
}

// expectedExt renders the expected extension for a message.
func (sr *scriptRun) expectedExt(vals []Matcher) string {
	var parts []string
	for _, m := range vals {
		if x, ok := m.(*Expression); ok {
			if v, err := sr.eval(x.X); err == nil {
				switch v := v.(type) {
				case *dynamic.Matcher:
					parts = append(parts, v.Root().String())
					continue
				case []byte:
					parts = append(parts, sr.formatBuilt(x.X, v))
					continue
				}
			}
		}
		parts = append(parts, m.String())
	}
	return strings.Join(parts, " ")
}

// typeName finds the qualified name of the matcher's type.
func (sr *scriptRun) typeName(m *dynamic.Matcher) string {
	s := sr.schema
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

// describe renders a received frame: its type, flags, payload and
// extension, decoded by the IDL when typ names its type.
func (sr *scriptRun) describe(f frame, typ string) string {
	var b strings.Builder
	b.WriteString(f.kind.String())
	if f.stream != 0 {
		fmt.Fprintf(&b, " stream %#x", f.stream)
	}
	switch f.kind {
	case frameData:
		if f.flags != flagInit|flagFin {
			fmt.Fprintf(&b, " flags 0x%02x", f.flags)
		}
		switch {
		case f.payload == nil:
			b.WriteString(" null")
		default:
			b.WriteString(" " + quoteBytes(f.payload))
		}
	case frameWindow:
		b.WriteString(" " + strconv.FormatInt(f.credit, 10))
	case frameRedirect:
		fmt.Fprintf(&b, " affinity %#x", f.affinity)
	}
	if len(f.ext) > 0 {
		b.WriteString(" ext ")
		if s := sr.schema; typ != "" && s != nil {
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
