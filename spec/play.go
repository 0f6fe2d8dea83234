package spec

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/sluicehq/sluice/idl/dynamic"
)

// RunPair plays a client script against a server script in memory, peer to
// peer, as Zilla's spec ITs do with k3po and no engine. clientSrc and
// serverSrc are the sources the scripts were parsed from; they are only
// used to show an excerpt when a command fails. It is Play with the two
// scripts on an in-memory network.
func RunPair(ctx context.Context, client, server *Script, clientSrc, serverSrc []byte) error {
	return playScripts(ctx, newMemNetwork(), nil, nil,
		[]*Source{{Script: client, Src: clientSrc}, {Script: server, Src: serverSrc}})
}

// Source is a parsed script and the bytes it was parsed from.
type Source struct {
	Script *Script
	Src    []byte
}

// errPeerFailed stops a script because another one failed first.
var errPeerFailed = errors.New("another script failed")

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

// Barriers are the barriers of one run, shared with code outside the
// scripts, as k3po's notifyBarrier and awaitBarrier share them with a Java
// test: a Go test notifies a barrier that a script awaits, or awaits one
// that a script notifies. Give them to a run with [WithBarriers]; like a
// script's barriers they are notified once and stay notified, so use a
// fresh set for each run.
type Barriers struct{ b *barriers }

// NewBarriers returns a set of barriers, none notified.
func NewBarriers() *Barriers {
	return &Barriers{b: &barriers{m: map[string]chan struct{}{}}}
}

// Notify notifies the barrier name; notifying it again does nothing.
func (b *Barriers) Notify(name string) { b.b.notify(name) }

// Await waits until the barrier name is notified, or ctx is done.
func (b *Barriers) Await(ctx context.Context, name string) error {
	select {
	case <-b.b.get(name):
		return nil
	case <-ctx.Done():
		return fmt.Errorf("barrier %s: %w", name, context.Cause(ctx))
	}
}

// barriersKey carries a run's *Barriers in its context.
type barriersKey struct{}

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

// play is one run of a set of scripts over a network.
type play struct {
	net   network
	bars  *barriers
	trace func(file string, received bool, f frame)
}

// traceKey carries a trace function in a context, for tests that check
// the order frames travel in.
type traceKey struct{}

// plan is one connect or accept of a script, its address and options
// evaluated.
type plan struct {
	sr     *scriptRun
	st     *Stream
	uri    string
	accept bool
	opts   streamOptions
	l      listener
	turn   *turn // a connect's place in the script's opening order, or nil
}

// playScripts plays every stream of every script at once over net, as
// k3po does: the streams of all scripts start together and order
// themselves by barriers. labels resolves zilla:id (nil: a table shared by
// the scripts) and props overrides script properties by name.
//
// The first stream that fails ends the run: its error reads
// "<file>:<line>: <what was expected>, observed <frame>" followed by an
// excerpt of the script around the line, and the other streams stop. Every
// wait is bounded by ctx; when its deadline passes the error reads
// "<file>:<line>: timed out waiting for <what>". Streams that fail on
// their own (all time out) are joined.
func playScripts(ctx context.Context, net network, labels func(string) int32, props map[string]any, scripts []*Source) error {
	if labels == nil {
		labels = newSharedLabels()
	}
	schema, _ := dynamic.Builtin()
	p := &play{net: newHTTPNetwork(net), bars: &barriers{m: map[string]chan struct{}{}}}
	defer p.net.close()
	if b, ok := ctx.Value(barriersKey{}).(*Barriers); ok && b != nil {
		p.bars = b.b
	}
	p.trace, _ = ctx.Value(traceKey{}).(func(string, bool, frame))
	var plans []*plan
	for _, src := range scripts {
		sr := &scriptRun{
			script: src.Script, src: src.Src, play: p, schema: schema,
			env:   &Env{Properties: map[string]any{}, Labels: labels, File: src.Script.File, Schema: schema},
			envMu: make(chan struct{}, 1),
		}
		if err := sr.evalProperties(props); err != nil {
			return err
		}
		if len(src.Script.Streams) == 0 {
			return fmt.Errorf("%s: no connect or accept stream", src.Script.File)
		}
		var prev <-chan struct{}
		for _, st := range src.Script.Streams {
			pl, err := sr.plan(st)
			if err != nil {
				return err
			}
			if c, ok := st.Head.(*Connect); ok && c.Await == "" {
				pl.turn = &turn{prev: prev, done: make(chan struct{})}
				prev = pl.turn.done
			}
			plans = append(plans, pl)
		}
	}
	// Bind every accept before anything connects.
	accepted := map[string]bool{}
	for _, pl := range plans {
		if !pl.accept {
			continue
		}
		l, err := p.net.listen(pl.uri, &pl.opts)
		if err != nil {
			return pl.sr.failf(pl.st.Head, "accept %s: %v", pl.uri, err)
		}
		pl.l = l
		defer l.close()
		accepted[transportKey(pl.uri, &pl.opts)] = true
	}
	if _, mem := net.(*memNetwork); mem {
		for _, pl := range plans {
			if !pl.accept && !accepted[transportKey(pl.uri, &pl.opts)] {
				var uris []string
				for u := range accepted {
					uris = append(uris, fmt.Sprintf("%q", u))
				}
				sort.Strings(uris)
				what := "no script accepts"
				if len(uris) > 0 {
					what = "the scripts accept " + strings.Join(uris, ", ")
				}
				return pl.sr.failf(pl.st.Head, "client connects to %q but %s", pl.uri, what)
			}
		}
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	report := func(err error) {
		if err == nil || errors.Is(err, errPeerFailed) {
			return
		}
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
		cancel(errPeerFailed)
	}
	spawn := func(fn func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			report(fn())
		}()
	}
	for _, pl := range plans {
		if pl.accept {
			spawn(func() error { return pl.runAccept(ctx, spawn) })
		} else {
			spawn(func() error { return pl.runConnect(ctx) })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (sr *scriptRun) evalProperties(overrides map[string]any) error {
	for _, prop := range sr.script.Properties {
		if v, ok := overrides[prop.Name]; ok {
			sr.env.Properties[prop.Name] = v
			continue
		}
		v, err := sr.evalValue(prop.Value)
		if err != nil {
			return sr.failf(prop, "%v", err)
		}
		sr.env.Properties[prop.Name] = v
	}
	return nil
}

func (sr *scriptRun) plan(st *Stream) (*plan, error) {
	pl := &plan{sr: sr, st: st, opts: defaultOptions()}
	var uri Value
	var opts []*Option
	switch h := st.Head.(type) {
	case *Connect:
		uri, opts = h.URI, h.Options
	case *Accept:
		uri, opts, pl.accept = h.URI, h.Options, true
	default:
		return nil, sr.unsupported(st.Head, fmt.Sprintf("stream %q", commandName(st.Head)))
	}
	u, err := sr.evalString(uri)
	if err != nil {
		return nil, sr.failf(st.Head, "%v", err)
	}
	if !strings.HasPrefix(u, "zilla://streams/") && !strings.HasPrefix(u, "tcp://") && !isHTTP(u) {
		return nil, sr.failf(st.Head, "unsupported address %q: want zilla://streams/<name>, tcp://host:port or http://host:port/path", u)
	}
	pl.uri = u
	for _, o := range opts {
		v, err := sr.evalValue(o.Value)
		if err != nil {
			return nil, sr.failf(o, "%v", err)
		}
		if err := pl.opts.set(o.Name, v); err != nil {
			if errors.Is(err, errUnsupportedOption) {
				return nil, sr.unsupported(o, fmt.Sprintf("option %q", o.Name))
			}
			return nil, sr.failf(o, "%v", err)
		}
	}
	return pl, nil
}

func (pl *plan) runConnect(ctx context.Context) error {
	h := pl.st.Head.(*Connect)
	s := newStream(pl.sr, h, pl.uri, false, pl.opts)
	s.turn = pl.turn
	defer func() {
		s.turn.release()
		if s.c != nil {
			s.c.close()
		}
	}()
	if h.Await != "" {
		if err := s.awaitBarrier(ctx, h, h.Await); err != nil {
			return err
		}
	}
	return s.run(ctx, pl.st.Commands)
}

// runAccept plays the listening commands, then hands each accepted
// connection, in order of arrival, to the next accepted block, which runs
// on its own.
func (pl *plan) runAccept(ctx context.Context, spawn func(func() error)) error {
	h := pl.st.Head.(*Accept)
	top := newStream(pl.sr, h, pl.uri, true, pl.opts)
	if h.Await != "" {
		if err := top.awaitBarrier(ctx, h, h.Await); err != nil {
			return err
		}
	}
	if h.Notify != "" {
		pl.sr.play.bars.notify(h.Notify)
	}
	var children [][]Command
	var listening []Command
	for _, cmd := range pl.st.Commands {
		switch cmd.(type) {
		case *Accepted, *Rejected:
			children = append(children, []Command{cmd})
		default:
			if len(children) == 0 {
				listening = append(listening, cmd)
			} else {
				children[len(children)-1] = append(children[len(children)-1], cmd)
			}
		}
	}
	if err := top.run(ctx, listening); err != nil {
		return err
	}
	for _, child := range children {
		c, err := pl.l.accept(ctx)
		if err != nil {
			if ctx.Err() == nil {
				return pl.sr.failf(child[0], "accepting %s: %v", pl.uri, err)
			}
			return pl.sr.ctxErr(ctx, child[0], "a connection to "+pl.uri)
		}
		s := newStream(pl.sr, child[0], pl.uri, true, pl.opts)
		s.attach(c)
		spawn(func() error {
			defer c.close()
			return s.runAccepted(ctx, child)
		})
	}
	return nil
}

// runAccepted plays one accepted (or rejected) block on its connection.
func (s *stream) runAccepted(ctx context.Context, cmds []Command) error {
	head := cmds[0]
	if err := s.wait(ctx, head, "BEGIN", nil, func() bool { return s.peerBegun }); err != nil {
		return err
	}
	if want := s.opts.authorization; want != 0 && s.peerBegin.authorization != want {
		return s.failf(head, "expected BEGIN with authorization %#x, observed authorization %#x", want, s.peerBegin.authorization)
	}
	if r, ok := head.(*Rejected); ok {
		// The checks of the refused BEGIN come first, as k3po applies a
		// rejected block's read zilla:begin.ext to the BEGIN it refuses;
		// the rest of the block plays after the RESET.
		rest := cmds[1:]
		for len(rest) > 0 {
			re, ok := rest[0].(*ReadExt)
			if !ok || re.Kind != "begin" {
				break
			}
			if err := s.exec(ctx, re); err != nil {
				return err
			}
			rest = rest[1:]
		}
		var ext []byte
		if w, ok := r.Write.(*WriteExt); ok && w.Kind == "reset" {
			b, err := s.sr.concat(w.Values)
			if err != nil {
				return s.failf(r, "%v", err)
			}
			ext = b
		} else if r.Write != nil {
			return s.unsupported(r, fmt.Sprintf("command %q", commandName(r.Write)))
		}
		s.readDone, s.stopped = true, true
		if err := s.send(ctx, r, frame{kind: frameReset, ext: ext}); err != nil {
			return err
		}
		return s.run(ctx, rest)
	}
	return s.run(ctx, cmds[1:])
}
