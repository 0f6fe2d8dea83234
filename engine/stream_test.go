package engine_test

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/ring"
)

const (
	testOrigin = int64(0x0001_0000_0002)
	testRouted = int64(0x0001_0000_0003)
)

// sent is a frame a Stream sent, decoded from the worker's ring.
type sent struct {
	t                frame.FrameType
	id, seq, ack     int64
	max              int32
	trace, auth      int64
	affinity, budget int64
	flags            uint8
	reserved, pad    int32
	min              int32
	cap              uint8
	payload, ext     []byte
	null             bool
	origin, routed   int64
}

// drain decodes and removes every frame in w's ring.
func drain(t *testing.T, w *engine.Worker) []sent {
	t.Helper()
	var out []sent
	engine.ReadFrames(w, func(typ frame.FrameType, buf []byte) {
		var h frame.Frame
		require.True(t, h.TryWrap(buf, 0, len(buf)), "%s header", typ)
		f := sent{t: typ, id: h.StreamID(), seq: h.Sequence(), ack: h.Acknowledge(), max: h.Maximum(),
			trace: h.TraceID(), auth: h.Authorization(), origin: h.OriginID(), routed: h.RoutedID()}
		switch typ {
		case frame.FrameBegin:
			var b frame.Begin
			require.True(t, b.TryWrap(buf, 0, len(buf)))
			f.affinity, f.ext = b.Affinity(), bytes.Clone(b.Extension())
		case frame.FrameData:
			var d frame.Data
			require.True(t, d.TryWrap(buf, 0, len(buf)))
			f.flags, f.budget, f.reserved = d.Flags(), d.BudgetID(), d.Reserved()
			f.payload, f.null, f.ext = bytes.Clone(d.Payload()), !d.HasPayload(), bytes.Clone(d.Extension())
		case frame.FrameFlush:
			var fl frame.Flush
			require.True(t, fl.TryWrap(buf, 0, len(buf)))
			f.budget, f.reserved, f.ext = fl.BudgetID(), fl.Reserved(), bytes.Clone(fl.Extension())
		case frame.FrameEnd:
			var e frame.End
			require.True(t, e.TryWrap(buf, 0, len(buf)))
			f.budget, f.reserved, f.ext = e.BudgetID(), e.Reserved(), bytes.Clone(e.Extension())
		case frame.FrameAbort:
			var a frame.Abort
			require.True(t, a.TryWrap(buf, 0, len(buf)))
			f.ext = bytes.Clone(a.Extension())
		case frame.FrameWindow:
			var wi frame.Window
			require.True(t, wi.TryWrap(buf, 0, len(buf)))
			f.budget, f.pad, f.min, f.cap = wi.BudgetID(), wi.Padding(), wi.Minimum(), wi.Capabilities()
		case frame.FrameReset:
			var r frame.Reset
			require.True(t, r.TryWrap(buf, 0, len(buf)))
			f.ext = bytes.Clone(r.Extension())
		case frame.FrameChallenge:
			var c frame.Challenge
			require.True(t, c.TryWrap(buf, 0, len(buf)))
			f.ext = bytes.Clone(c.Extension())
		}
		out = append(out, f)
	})
	return out
}

func types(frames []sent) []frame.FrameType {
	var out []frame.FrameType
	for _, f := range frames {
		out = append(out, f.t)
	}
	return out
}

// peer builds the frames a Stream receives, in its own buffer.
type peer struct {
	buf []byte
}

func newPeer() *peer { return &peer{buf: make([]byte, 1024)} }

func (p *peer) begin(id, seq, ack int64) []byte {
	var b frame.BeginBuilder
	n, err := b.Wrap(p.buf, 0, len(p.buf)).OriginID(testOrigin).RoutedID(testRouted).StreamID(id).
		Sequence(seq).Acknowledge(ack).Maximum(0).TraceID(7).Authorization(9).Affinity(0).BuildLimit()
	must(err)
	return p.buf[:n]
}

func (p *peer) data(id, seq int64, reserved int32, payload string) []byte {
	var b frame.DataBuilder
	n, err := b.Wrap(p.buf, 0, len(p.buf)).OriginID(testOrigin).RoutedID(testRouted).StreamID(id).
		Sequence(seq).Acknowledge(0).Maximum(0).BudgetID(0).Reserved(reserved).
		Payload([]byte(payload)).BuildLimit()
	must(err)
	return p.buf[:n]
}

func (p *peer) flush(id, seq int64, reserved int32) []byte {
	var b frame.FlushBuilder
	n, err := b.Wrap(p.buf, 0, len(p.buf)).OriginID(testOrigin).RoutedID(testRouted).StreamID(id).
		Sequence(seq).Acknowledge(0).Maximum(0).BudgetID(0).Reserved(reserved).BuildLimit()
	must(err)
	return p.buf[:n]
}

func (p *peer) end(id, seq int64) []byte {
	var b frame.EndBuilder
	n, err := b.Wrap(p.buf, 0, len(p.buf)).OriginID(testOrigin).RoutedID(testRouted).StreamID(id).
		Sequence(seq).Acknowledge(0).Maximum(0).BuildLimit()
	must(err)
	return p.buf[:n]
}

func (p *peer) abort(id, seq int64) []byte {
	var b frame.AbortBuilder
	n, err := b.Wrap(p.buf, 0, len(p.buf)).OriginID(testOrigin).RoutedID(testRouted).StreamID(id).
		Sequence(seq).Acknowledge(0).Maximum(0).BuildLimit()
	must(err)
	return p.buf[:n]
}

func (p *peer) window(id, seq, ack int64, max, pad int32) []byte {
	var b frame.WindowBuilder
	n, err := b.Wrap(p.buf, 0, len(p.buf)).OriginID(testOrigin).RoutedID(testRouted).StreamID(id).
		Sequence(seq).Acknowledge(ack).Maximum(max).BudgetID(0).Padding(pad).BuildLimit()
	must(err)
	return p.buf[:n]
}

func (p *peer) reset(id int64) []byte {
	var b frame.ResetBuilder
	n, err := b.Wrap(p.buf, 0, len(p.buf)).OriginID(testOrigin).RoutedID(testRouted).StreamID(id).
		Sequence(0).Acknowledge(0).Maximum(0).BuildLimit()
	must(err)
	return p.buf[:n]
}

// accepted returns a Stream served on w whose initial BEGIN has arrived.
func accepted(t *testing.T, w *engine.Worker) *engine.Stream {
	t.Helper()
	s := new(engine.Stream)
	s.Accept(w, testOrigin, testRouted, w.SupplyInitialID(testRouted))
	_, err := s.OnBegin(newPeer().begin(s.InID(), 0, 0))
	require.NoError(t, err)
	return s
}

// connected returns a Stream opened from w, its BEGIN not yet sent.
func connected(w *engine.Worker) *engine.Stream {
	s := new(engine.Stream)
	s.Connect(w, testOrigin, testRouted, w.SupplyInitialID(testRouted), func(frame.FrameType, []byte) {})
	return s
}

func TestStreamIDs(t *testing.T) {
	w := engine.NewIdleWorker(t, 1<<16)
	initial := w.SupplyInitialID(testRouted)
	var a, c engine.Stream
	a.Accept(w, testOrigin, testRouted, initial)
	c.Connect(w, testOrigin, testRouted, initial, nil)
	for _, tc := range []struct {
		name      string
		s         *engine.Stream
		out, in   int64
		initiator bool
	}{
		{"accepted sends the reply", &a, engine.ReplyID(initial), initial, false},
		{"connected sends the initial", &c, initial, engine.ReplyID(initial), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.out, tc.s.OutID())
			assert.Equal(t, tc.in, tc.s.InID())
			assert.Equal(t, initial, tc.s.InitialID())
			assert.Equal(t, engine.ReplyID(initial), tc.s.ReplyID())
			assert.Equal(t, tc.initiator, tc.s.Initiator())
			assert.Equal(t, testOrigin, tc.s.OriginID())
			assert.Equal(t, testRouted, tc.s.RoutedID())
			assert.Same(t, w, tc.s.Worker())
		})
	}
}

// TestStreamSize pins the per-stream cost: a binding keeps one Stream per
// stream, and the builders are the worker's.
func TestStreamSize(t *testing.T) {
	assert.Equal(t, uintptr(64), unsafe.Sizeof(engine.Direction{}))
	assert.Equal(t, uintptr(168), unsafe.Sizeof(engine.Stream{}))
}

func TestStreamStateString(t *testing.T) {
	assert.Equal(t, "0", engine.StreamState(0).String())
	assert.Equal(t, "REPLY_OPENING|INITIAL_OPENING|INITIAL_CLOSED",
		(engine.InitialOpening | engine.InitialClosed | engine.ReplyOpening).String())
	assert.True(t, (engine.InitialClosed | engine.ReplyClosed | engine.ReplyOpening).Closed())
	assert.False(t, engine.InitialClosed.Closed())
}

func TestStreamStateTransitions(t *testing.T) {
	const (
		iOpening = engine.InitialOpening
		iOpened  = engine.InitialOpened
		iClosed  = engine.InitialClosing | engine.InitialClosed
		rOpening = engine.ReplyOpening
		rOpened  = engine.ReplyOpened
		rClosed  = engine.ReplyClosing | engine.ReplyClosed

		BEGIN  = frame.FrameBegin
		WINDOW = frame.FrameWindow
		END    = frame.FrameEnd
		ABORT  = frame.FrameAbort
		RESET  = frame.FrameReset
	)
	p := newPeer()
	onWindow := func(s *engine.Stream) error { _, err := s.OnWindow(p.window(s.OutID(), 0, 0, 100, 0)); return err }
	onBegin := func(s *engine.Stream) error { _, err := s.OnBegin(p.begin(s.InID(), 0, 0)); return err }
	onEnd := func(s *engine.Stream) error { _, err := s.OnEnd(p.end(s.InID(), 0)); return err }
	onAbort := func(s *engine.Stream) error { _, err := s.OnAbort(p.abort(s.InID(), 0)); return err }
	onReset := func(s *engine.Stream) error { _, err := s.OnReset(p.reset(s.OutID())); return err }
	begin := func(s *engine.Stream) error { return s.Begin(nil) }
	window := func(s *engine.Stream) error { s.In.Max = 100; return s.Window() }
	end := func(s *engine.Stream) error { return s.End(nil) }
	abort := func(s *engine.Stream) error { return s.Abort(nil) }
	reset := func(s *engine.Stream) error { return s.Reset(nil) }
	closing := func(s *engine.Stream) error { s.Out.SetClosing(); return nil }

	type step = func(*engine.Stream) error
	for _, tc := range []struct {
		name      string
		initiator bool
		steps     []step
		want      engine.StreamState
		frames    []frame.FrameType
	}{
		{"target: initial begun", false, nil, iOpening, nil},
		{"target: reply begun", false, []step{begin}, iOpening | rOpening, []frame.FrameType{BEGIN}},
		{"target: windows exchanged", false, []step{begin, onWindow, window},
			iOpening | iOpened | rOpening | rOpened, []frame.FrameType{BEGIN, WINDOW}},
		{"target: reply closing", false, []step{begin, closing},
			iOpening | rOpening | engine.ReplyClosing, []frame.FrameType{BEGIN}},
		{"target: initial ended", false, []step{begin, onEnd}, iOpening | iClosed | rOpening, []frame.FrameType{BEGIN}},
		{"target: both ended", false, []step{begin, onEnd, end},
			iOpening | iClosed | rOpening | rClosed, []frame.FrameType{BEGIN, END}},
		{"target: both aborted", false, []step{begin, onAbort, abort},
			iOpening | iClosed | rOpening | rClosed, []frame.FrameType{BEGIN, ABORT}},
		{"target: a reset before the reply gives the reply up", false, []step{reset},
			iOpening | iClosed | rClosed, []frame.FrameType{RESET}},
		{"target: a reset after the reply began keeps it", false, []step{begin, reset},
			iOpening | iClosed | rOpening, []frame.FrameType{BEGIN, RESET}},
		{"target: reply reset", false, []step{begin, onReset}, iOpening | rOpening | rClosed, []frame.FrameType{BEGIN}},
		{"initiator: nothing sent", true, nil, 0, nil},
		{"initiator: initial begun", true, []step{begin}, iOpening, []frame.FrameType{BEGIN}},
		{"initiator: both open", true, []step{begin, onWindow, onBegin, window},
			iOpening | iOpened | rOpening | rOpened, []frame.FrameType{BEGIN, WINDOW}},
		{"initiator: a reset before the reply gives the reply up", true, []step{begin, onReset},
			iOpening | iClosed | rClosed, []frame.FrameType{BEGIN}},
		{"initiator: a reset after the reply began keeps it", true, []step{begin, onBegin, onReset},
			iOpening | iClosed | rOpening, []frame.FrameType{BEGIN}},
		{"initiator: both ended", true, []step{begin, onBegin, end, onEnd},
			iOpening | iClosed | rOpening | rClosed, []frame.FrameType{BEGIN, END}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := engine.NewIdleWorker(t, 1<<16)
			var s *engine.Stream
			if tc.initiator {
				s = connected(w)
			} else {
				s = accepted(t, w)
			}
			for i, step := range tc.steps {
				require.NoError(t, step(s), "step %d", i)
			}
			assert.Equal(t, tc.want.String(), s.State().String())
			assert.Equal(t, tc.want.Closed(), s.Closed())
			assert.Equal(t, tc.frames, types(drain(t, w)))
		})
	}
}

// TestStreamCloseOnce: a second close is a no-op, never a second frame;
// a frame after a close or out of order is refused without being sent.
func TestStreamCloseOnce(t *testing.T) {
	type op = func(*engine.Stream) error
	var (
		begin     op = func(s *engine.Stream) error { return s.Begin(nil) }
		data      op = func(s *engine.Stream) error { return s.Data(frame.FlagsDataMessage, nil, nil) }
		flush     op = func(s *engine.Stream) error { return s.Flush(nil) }
		end       op = func(s *engine.Stream) error { return s.End(nil) }
		abort     op = func(s *engine.Stream) error { return s.Abort(nil) }
		window    op = (*engine.Stream).Window
		reset     op = func(s *engine.Stream) error { return s.Reset(nil) }
		challenge op = func(s *engine.Stream) error { return s.Challenge(nil) }
	)
	const (
		END   = frame.FrameEnd
		ABORT = frame.FrameAbort
		RESET = frame.FrameReset
	)
	for _, tc := range []struct {
		name    string
		begun   bool // the reply's BEGIN is out before first
		first   op
		second  op
		wantErr error
		frames  []frame.FrameType
	}{
		{"end, end", true, end, end, nil, []frame.FrameType{END}},
		{"end, abort", true, end, abort, nil, []frame.FrameType{END}},
		{"abort, end", true, abort, end, nil, []frame.FrameType{ABORT}},
		{"abort, abort", true, abort, abort, nil, []frame.FrameType{ABORT}},
		{"end, data", true, end, data, engine.ErrStreamClosed, []frame.FrameType{END}},
		{"end, flush", true, end, flush, engine.ErrStreamClosed, []frame.FrameType{END}},
		{"end, begin", true, end, begin, engine.ErrStreamClosed, []frame.FrameType{END}},
		{"begin twice", true, nil, begin, engine.ErrStreamState, nil},
		{"reset, reset", true, reset, reset, nil, []frame.FrameType{RESET}},
		{"reset, window", true, reset, window, nil, []frame.FrameType{RESET}},
		{"reset, challenge", true, reset, challenge, engine.ErrStreamClosed, []frame.FrameType{RESET}},
		{"data before begin", false, nil, data, engine.ErrStreamState, nil},
		{"flush before begin", false, nil, flush, engine.ErrStreamState, nil},
		{"end before begin", false, nil, end, engine.ErrStreamState, nil},
		{"abort before begin", false, nil, abort, engine.ErrStreamState, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := engine.NewIdleWorker(t, 1<<16)
			s := accepted(t, w)
			if tc.begun {
				require.NoError(t, s.Begin(nil))
				drain(t, w)
			}
			if tc.first != nil {
				require.NoError(t, tc.first(s))
			}
			err := tc.second(s)
			if tc.wantErr == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tc.wantErr)
			}
			assert.Equal(t, tc.frames, types(drain(t, w)))
		})
	}
}

// TestStreamRefused: a frame the full ring and backlog refuse closes its
// direction, retires the engine's registration for it, and is not tried
// again by a later close.
func TestStreamRefused(t *testing.T) {
	p := newPeer()
	for _, tc := range []struct {
		name string
		// setup runs on an initiator's stream before the ring fills.
		setup func(t *testing.T, s *engine.Stream)
		// refused is the send the full ring refuses.
		refused func(s *engine.Stream) error
		// want is the state after it, and streams and throttles the
		// registrations left.
		want               engine.StreamState
		streams, throttles int
		// then is a send that must now do nothing, with its error.
		then    func(s *engine.Stream) error
		thenErr error
	}{
		{
			name:    "begin: no stream at all",
			setup:   func(*testing.T, *engine.Stream) {},
			refused: func(s *engine.Stream) error { return s.Begin(nil) },
			want:    engine.InitialClosing | engine.InitialClosed | engine.ReplyClosing | engine.ReplyClosed,
			then:    func(s *engine.Stream) error { return s.End(nil) },
		},
		{
			name:      "data closes the initial and retires its throttle",
			setup:     opened,
			refused:   func(s *engine.Stream) error { return s.Data(frame.FlagsDataMessage, []byte("x"), nil) },
			want:      engine.InitialOpening | engine.InitialOpened | engine.InitialClosing | engine.InitialClosed,
			streams:   1,
			throttles: 0,
			then:      func(s *engine.Stream) error { return s.Data(frame.FlagsDataMessage, []byte("x"), nil) },
			thenErr:   engine.ErrStreamClosed,
		},
		{
			name:    "flush",
			setup:   opened,
			refused: func(s *engine.Stream) error { return s.Flush(nil) },
			want:    engine.InitialOpening | engine.InitialOpened | engine.InitialClosing | engine.InitialClosed,
			streams: 1,
			then:    func(s *engine.Stream) error { return s.Abort(nil) },
		},
		{
			name:    "end is not tried again",
			setup:   opened,
			refused: func(s *engine.Stream) error { return s.End(nil) },
			want:    engine.InitialOpening | engine.InitialOpened | engine.InitialClosing | engine.InitialClosed,
			streams: 1,
			then:    func(s *engine.Stream) error { return s.End(nil) },
		},
		{
			name:      "window closes the reply and retires its stream entry",
			setup:     opened,
			refused:   func(s *engine.Stream) error { s.In.Max = 10; return s.Window() },
			want:      engine.InitialOpening | engine.InitialOpened | engine.ReplyClosing | engine.ReplyClosed,
			throttles: 1,
			then:      (*engine.Stream).Window,
		},
		{
			name: "reset",
			setup: func(t *testing.T, s *engine.Stream) {
				opened(t, s)
				_, err := s.OnBegin(p.begin(s.InID(), 0, 0))
				require.NoError(t, err)
			},
			refused:   func(s *engine.Stream) error { return s.Reset(nil) },
			want:      engine.InitialOpening | engine.InitialOpened | engine.ReplyOpening | engine.ReplyClosing | engine.ReplyClosed,
			throttles: 1,
			then:      func(s *engine.Stream) error { return s.Reset(nil) },
		},
		{
			name:      "challenge",
			setup:     opened,
			refused:   func(s *engine.Stream) error { return s.Challenge([]byte{1}) },
			want:      engine.InitialOpening | engine.InitialOpened | engine.ReplyClosing | engine.ReplyClosed,
			throttles: 1,
			then:      func(s *engine.Stream) error { return s.Challenge(nil) },
			thenErr:   engine.ErrStreamClosed,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := engine.NewIdleWorker(t, 1<<16)
			s := connected(w)
			tc.setup(t, s)
			engine.FillRing(t, w)
			require.ErrorIs(t, tc.refused(s), ring.ErrFull)
			assert.Equal(t, tc.want.String(), s.State().String())
			streams, throttles := w.Streams()
			assert.Equal(t, tc.streams, streams, "stream registrations")
			assert.Equal(t, tc.throttles, throttles, "throttle registrations")
			if tc.thenErr == nil {
				assert.NoError(t, tc.then(s))
			} else {
				assert.ErrorIs(t, tc.then(s), tc.thenErr)
			}
		})
	}
}

// TestStreamElse: with the ring full, AbortElseReset and ResetElseAbort
// each try one direction, then the other, and end with both closed and
// every registration retired, without looping.
func TestStreamElse(t *testing.T) {
	p := newPeer()
	for name, teardown := range map[string]func(*engine.Stream){
		"abort else reset": (*engine.Stream).AbortElseReset,
		"reset else abort": (*engine.Stream).ResetElseAbort,
	} {
		t.Run(name, func(t *testing.T) {
			w := engine.NewIdleWorker(t, 1<<16)
			s := connected(w)
			opened(t, s)
			_, err := s.OnBegin(p.begin(s.InID(), 0, 0))
			require.NoError(t, err)
			engine.FillRing(t, w)
			teardown(s)
			assert.True(t, s.Closed(), s.State().String())
			streams, throttles := w.Streams()
			assert.Zero(t, streams, "stream registrations")
			assert.Zero(t, throttles, "throttle registrations")
		})
	}
}

// opened begins an initiator's stream and gives it a window.
func opened(t *testing.T, s *engine.Stream) {
	t.Helper()
	require.NoError(t, s.Begin(nil))
	_, err := s.OnWindow(newPeer().window(s.OutID(), 0, 0, 1000, 0))
	require.NoError(t, err)
	streams, throttles := s.Worker().Streams()
	require.Equal(t, 1, streams)
	require.Equal(t, 1, throttles)
}

// TestStreamRefusedReplyBegin: a target whose reply BEGIN is refused has
// given up the reply but may still reset the initial direction.
func TestStreamRefusedReplyBegin(t *testing.T) {
	w := engine.NewIdleWorker(t, 1<<16)
	s := accepted(t, w)
	engine.FillRing(t, w)
	require.ErrorIs(t, s.Begin([]byte{1}), ring.ErrFull)
	assert.True(t, s.Out.Closed())
	assert.False(t, s.In.Closed())
	assert.ErrorIs(t, s.Reset(nil), ring.ErrFull)
	assert.True(t, s.Closed())
}

// TestStreamForgo: Forgo closes a direction that has not begun without a
// frame, and leaves one that has begun to End or Abort.
func TestStreamForgo(t *testing.T) {
	p := newPeer()
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, s *engine.Stream)
		target bool
		want   engine.StreamState
		frames []frame.FrameType // sent by setup, Forgo and a later End
	}{
		{
			name: "a reply not begun once the initial ended",
			setup: func(t *testing.T, s *engine.Stream) {
				_, err := s.OnEnd(p.end(s.InID(), 0))
				require.NoError(t, err)
			},
			target: true,
			want:   engine.InitialOpening | engine.InitialClosing | engine.InitialClosed | engine.ReplyClosing | engine.ReplyClosed,
		},
		{
			name:   "a reply begun is left to End",
			setup:  func(t *testing.T, s *engine.Stream) { require.NoError(t, s.Begin(nil)) },
			target: true,
			want:   engine.InitialOpening | engine.ReplyOpening | engine.ReplyClosing | engine.ReplyClosed,
			frames: []frame.FrameType{frame.FrameBegin, frame.FrameEnd},
		},
		{
			name: "an initial whose BEGIN could not be built",
			setup: func(t *testing.T, s *engine.Stream) {
				require.Error(t, s.Begin(make([]byte, len(s.Worker().WriteBuffer()))))
			},
			want: engine.InitialClosing | engine.InitialClosed | engine.ReplyClosing | engine.ReplyClosed,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := engine.NewIdleWorker(t, 1<<16)
			var s *engine.Stream
			if tc.target {
				s = accepted(t, w)
			} else {
				s = connected(w)
			}
			tc.setup(t, s)
			s.Forgo()
			assert.NoError(t, s.End(nil))
			assert.Equal(t, tc.want.String(), s.State().String())
			assert.Equal(t, tc.frames, types(drain(t, w)))
			streams, throttles := w.Streams()
			assert.Zero(t, streams+throttles, "registrations left")
		})
	}
}

func TestStreamSendFlow(t *testing.T) {
	p := newPeer()
	for _, tc := range []struct {
		name     string
		send     func(s *engine.Stream) error
		wantErr  error
		wantSeq  int64 // Out.Seq after, from 0 with a window of 100, padding 10
		reserved int32 // of the frame sent, when one is
	}{
		{"data reserves its length and the padding",
			func(s *engine.Stream) error { return s.Data(frame.FlagsDataMessage, []byte("hello"), nil) }, nil, 15, 15},
		{"data with a chosen reserve",
			func(s *engine.Stream) error { return s.DataWith(frame.FlagsDataMessage, 42, nil) }, nil, 42, 42},
		{"data that fills the window",
			func(s *engine.Stream) error { return s.Data(frame.FlagsDataMessage, make([]byte, 90), nil) }, nil, 100, 100},
		{"data beyond the window is not sent",
			func(s *engine.Stream) error { return s.Data(frame.FlagsDataMessage, make([]byte, 91), nil) }, engine.ErrWindowOverrun, 0, 0},
		{"a negative reserve is not sent",
			func(s *engine.Stream) error { return s.DataWith(frame.FlagsDataMessage, -1, nil) }, engine.ErrWindowOverrun, 0, 0},
		{"flush reserves nothing",
			func(s *engine.Stream) error { return s.Flush([]byte{1}) }, nil, 0, 0},
		{"flush with a reserve",
			func(s *engine.Stream) error { return s.FlushWith(30, nil) }, nil, 30, 30},
		{"flush beyond the window is not sent",
			func(s *engine.Stream) error { return s.FlushWith(101, nil) }, engine.ErrWindowOverrun, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := engine.NewIdleWorker(t, 1<<16)
			s := accepted(t, w)
			require.NoError(t, s.Begin(nil))
			_, err := s.OnWindow(p.window(s.OutID(), 0, 0, 100, 10))
			require.NoError(t, err)
			drain(t, w)
			err = tc.send(s)
			assert.Equal(t, tc.wantSeq, s.Out.Seq)
			frames := drain(t, w)
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
				assert.Empty(t, frames)
				assert.False(t, s.Out.Closed(), "a send refused by flow control leaves the stream open")
				return
			}
			require.NoError(t, err)
			require.Len(t, frames, 1)
			assert.Equal(t, tc.reserved, frames[0].reserved)
			assert.Equal(t, int64(0), frames[0].seq, "the frame carries the sequence before it")
		})
	}
}

func TestStreamReceiveFlow(t *testing.T) {
	p := newPeer()
	type recv = func(s *engine.Stream) error
	data := func(seq int64, reserved int32) recv {
		return func(s *engine.Stream) error { _, err := s.OnData(p.data(s.InID(), seq, reserved, "x")); return err }
	}
	flush := func(seq int64, reserved int32) recv {
		return func(s *engine.Stream) error { _, err := s.OnFlush(p.flush(s.InID(), seq, reserved)); return err }
	}
	end := func(seq int64) recv {
		return func(s *engine.Stream) error { _, err := s.OnEnd(p.end(s.InID(), seq)); return err }
	}
	for _, tc := range []struct {
		name    string
		recv    []recv // after a window of 100 offered at seq 0
		wantErr error  // of the last
		wantSeq int64
	}{
		{"data within the window", []recv{data(0, 60), data(60, 40)}, nil, 100},
		{"data beyond the window", []recv{data(0, 60), data(60, 41)}, engine.ErrWindowOverrun, 60},
		{"data going back", []recv{data(0, 60), data(10, 1)}, engine.ErrSequence, 60},
		{"flush charges its reserve", []recv{flush(0, 30)}, nil, 30},
		{"flush beyond the window", []recv{flush(0, 101)}, engine.ErrWindowOverrun, 0},
		{"end in order", []recv{data(0, 60), end(60)}, nil, 60},
		{"end going back", []recv{data(0, 60), end(10)}, engine.ErrSequence, 60},
		{"data after end", []recv{end(0), data(0, 1)}, engine.ErrStreamClosed, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := engine.NewIdleWorker(t, 1<<16)
			s := accepted(t, w)
			assert.True(t, s.In.Grant(100))
			require.NoError(t, s.Window())
			var err error
			for i, r := range tc.recv {
				err = r(s)
				if i < len(tc.recv)-1 {
					require.NoError(t, err, "frame %d", i)
				}
			}
			if tc.wantErr == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tc.wantErr)
			}
			assert.Equal(t, tc.wantSeq, s.In.Seq)
		})
	}
}

func TestStreamReceiveOrder(t *testing.T) {
	p := newPeer()
	w := engine.NewIdleWorker(t, 1<<16)
	s := new(engine.Stream)
	s.Accept(w, testOrigin, testRouted, w.SupplyInitialID(testRouted))
	_, err := s.OnData(p.data(s.InID(), 0, 0, ""))
	assert.ErrorIs(t, err, engine.ErrStreamState, "DATA before BEGIN")
	_, err = s.OnBegin(p.begin(s.InID(), 5, 3))
	require.NoError(t, err)
	assert.Equal(t, int64(5), s.In.Seq)
	assert.Equal(t, int64(3), s.In.Ack)
	_, err = s.OnBegin(p.begin(s.InID(), 5, 3))
	assert.ErrorIs(t, err, engine.ErrStreamState, "a second BEGIN")
	_, err = s.OnData([]byte{1, 2, 3})
	assert.ErrorIs(t, err, engine.ErrMalformedFrame)
	_, err = s.OnAbort([]byte{1})
	assert.ErrorIs(t, err, engine.ErrMalformedFrame)
	assert.True(t, s.In.Closed(), "a malformed ABORT still closes: the engine has retired the stream")
}

// TestStreamWindowInvariants: Zilla's WINDOW invariants, checked against
// a sender that has sent 50 bytes of a window of 100, 10 of them
// acknowledged: 60 bytes available.
func TestStreamWindowInvariants(t *testing.T) {
	p := newPeer()
	for _, tc := range []struct {
		name    string
		seq     int64
		ack     int64
		max     int32
		wantErr error
		avail   int64
	}{
		{"acknowledges part", 50, 20, 100, nil, 70},
		{"acknowledges all and grows", 50, 50, 200, nil, 200},
		{"ack beyond seq", 40, 45, 100, engine.ErrSequence, 60},
		{"seq beyond what was sent", 60, 50, 100, engine.ErrSequence, 60},
		{"ack goes back", 50, 5, 100, engine.ErrSequence, 60},
		{"negative maximum", 50, 50, -1, engine.ErrSequence, 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := engine.NewIdleWorker(t, 1<<16)
			s := accepted(t, w)
			require.NoError(t, s.Begin(nil))
			_, err := s.OnWindow(p.window(s.OutID(), 0, 10, 100, 0)) // ack 10 > seq 0
			require.ErrorIs(t, err, engine.ErrSequence)
			assert.False(t, s.Out.Opened(), "a WINDOW that breaks the invariants does not open")
			_, err = s.OnWindow(p.window(s.OutID(), 0, 0, 100, 0))
			require.NoError(t, err)
			require.NoError(t, s.Data(frame.FlagsDataMessage, make([]byte, 10), nil))
			_, err = s.OnWindow(p.window(s.OutID(), 10, 10, 100, 0))
			require.NoError(t, err)
			require.NoError(t, s.Data(frame.FlagsDataMessage, make([]byte, 40), nil))
			_, err = s.OnWindow(p.window(s.OutID(), tc.seq, tc.ack, tc.max, 0))
			if tc.wantErr == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tc.wantErr)
			}
			assert.Equal(t, tc.avail, s.Out.Available())
			assert.True(t, s.Out.Opened())
		})
	}
	t.Run("a window after the close changes nothing", func(t *testing.T) {
		w := engine.NewIdleWorker(t, 1<<16)
		s := accepted(t, w)
		require.NoError(t, s.Begin(nil))
		require.NoError(t, s.End(nil))
		_, err := s.OnWindow(p.window(s.OutID(), 99, 99, 100, 0))
		assert.NoError(t, err)
		assert.Equal(t, int64(0), s.Out.Available())
	})
}

// TestStreamFrames pins what each sender puts on the wire: the stream's
// ids, the direction's flow, trace id and authorization, and the frame's
// own fields.
func TestStreamFrames(t *testing.T) {
	w := engine.NewIdleWorker(t, 1<<16)
	s := accepted(t, w)
	s.Out.Trace, s.Out.Auth = 0x70, 0x80
	s.In.Trace, s.In.Auth = 0x71, 0x81
	out, in := s.OutID(), s.InID()

	require.NoError(t, s.BeginWith(0x5a, func(b *frame.BeginBuilder) { b.Extension([]byte("bx")) }))
	_, err := s.OnWindow(newPeer().window(out, 0, 0, 1000, 4))
	require.NoError(t, err)
	s.Out.Budget = 0xb0
	require.NoError(t, s.Data(frame.FlagDataInit, []byte("abc"), []byte("dx")))
	require.NoError(t, s.Data(frame.FlagDataFin, nil, nil))
	require.NoError(t, s.Data(frame.FlagsDataMessage, []byte{}, nil))
	require.NoError(t, s.DataWith(frame.FlagsDataMessage, 20, func(b *frame.DataBuilder) {
		copy(b.PayloadReserve(2), "pq")
		b.Extension([]byte("wx"))
	}))
	require.NoError(t, s.FlushWith(6, func(b *frame.FlushBuilder) { b.Extension([]byte("fx")) }))
	s.In.Ack, s.In.Max, s.In.Pad, s.In.Budget, s.In.Min, s.In.Cap = 0, 500, 3, 0xb1, 7, 1
	require.NoError(t, s.Window())
	require.NoError(t, s.Challenge([]byte("cx")))
	require.NoError(t, s.EndWith(func(b *frame.EndBuilder) { b.BudgetID(0xb0).Reserved(0).Extension([]byte("ex")) }))
	require.NoError(t, s.ResetWith(func(b *frame.ResetBuilder) { b.Extension([]byte("rx")) }))

	hdr := func(t frame.FrameType, id, seq, ack int64, max int32, trace, auth int64) sent {
		return sent{t: t, id: id, seq: seq, ack: ack, max: max, trace: trace, auth: auth, origin: testOrigin, routed: testRouted}
	}
	with := func(f sent, set func(*sent)) sent { set(&f); return f }
	want := []sent{
		with(hdr(frame.FrameBegin, out, 0, 0, 0, 0x70, 0x80), func(f *sent) { f.affinity, f.ext = 0x5a, []byte("bx") }),
		with(hdr(frame.FrameData, out, 0, 0, 1000, 0x70, 0x80), func(f *sent) {
			f.flags, f.budget, f.reserved, f.payload, f.ext = 2, 0xb0, 7, []byte("abc"), []byte("dx")
		}),
		with(hdr(frame.FrameData, out, 7, 0, 1000, 0x70, 0x80), func(f *sent) {
			f.flags, f.budget, f.reserved, f.null, f.ext = 1, 0xb0, 4, true, []byte{}
		}),
		with(hdr(frame.FrameData, out, 11, 0, 1000, 0x70, 0x80), func(f *sent) {
			f.flags, f.budget, f.reserved, f.payload, f.ext = 3, 0xb0, 4, []byte{}, []byte{}
		}),
		with(hdr(frame.FrameData, out, 15, 0, 1000, 0x70, 0x80), func(f *sent) {
			f.flags, f.budget, f.reserved, f.payload, f.ext = 3, 0xb0, 20, []byte("pq"), []byte("wx")
		}),
		with(hdr(frame.FrameFlush, out, 35, 0, 1000, 0x70, 0x80), func(f *sent) {
			f.budget, f.reserved, f.ext = 0xb0, 6, []byte("fx")
		}),
		with(hdr(frame.FrameWindow, in, 0, 0, 500, 0x71, 0x81), func(f *sent) {
			f.budget, f.pad, f.min, f.cap = 0xb1, 3, 7, 1
		}),
		with(hdr(frame.FrameChallenge, in, 0, 0, 500, 0x71, 0x81), func(f *sent) { f.ext = []byte("cx") }),
		with(hdr(frame.FrameEnd, out, 41, 0, 1000, 0x70, 0x80), func(f *sent) { f.budget, f.ext = 0xb0, []byte("ex") }),
		with(hdr(frame.FrameReset, in, 0, 0, 500, 0x71, 0x81), func(f *sent) { f.ext = []byte("rx") }),
	}
	assert.Equal(t, want, drain(t, w))
	assert.True(t, s.Closed())
}

func TestStreamBuildErrorLeavesStateAlone(t *testing.T) {
	w := engine.NewIdleWorker(t, 1<<16)
	s := accepted(t, w)
	huge := make([]byte, len(w.WriteBuffer()))
	assert.Error(t, s.Begin(huge))
	assert.False(t, s.Out.Opening())
	assert.False(t, s.Out.Closed())
	require.NoError(t, s.Begin(nil))
	assert.Equal(t, []frame.FrameType{frame.FrameBegin}, types(drain(t, w)))
}

// TestStreamSendsAllocateNothing: a stream's frames, sent and received,
// cost no allocation; the With senders' closures stay on the stack.
func TestStreamSendsAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	w := engine.NewIdleWorker(t, 1<<20)
	p := newPeer()
	payload, ext := []byte("0123456789abcdef"), []byte{1, 2}
	s := new(engine.Stream)
	allocs := testing.AllocsPerRun(100, func() { lifecycle(w, s, p, payload, ext) })
	assert.Zero(t, allocs)
}

// lifecycle serves one whole stream on w: BEGIN in and out, windows,
// DATA each way, FLUSH and END. It empties w's ring at the end.
func lifecycle(w *engine.Worker, s *engine.Stream, p *peer, payload, ext []byte) {
	s.Accept(w, testOrigin, testRouted, w.SupplyInitialID(testRouted))
	_, err := s.OnBegin(p.begin(s.InID(), 0, 0))
	must(err)
	must(s.BeginWith(0, func(b *frame.BeginBuilder) { b.Extension(ext) }))
	s.In.Grant(1 << 16)
	must(s.Window())
	_, err = s.OnWindow(p.window(s.OutID(), 0, 0, 1<<16, 0))
	must(err)
	_, err = s.OnData(p.data(s.InID(), 0, 16, "0123456789abcdef"))
	must(err)
	must(s.Data(frame.FlagsDataMessage, payload, ext))
	must(s.DataWith(frame.FlagsDataMessage, int32(len(payload)), func(b *frame.DataBuilder) {
		b.Payload(payload).Extension(ext)
	}))
	must(s.Flush(ext))
	_, err = s.OnEnd(p.end(s.InID(), 16))
	must(err)
	must(s.End(nil))
	engine.ReadFrames(w, func(frame.FrameType, []byte) {})
}

// BenchmarkStreamLifecycle serves one whole stream per op through the
// helper (lifecycle).
func BenchmarkStreamLifecycle(b *testing.B) {
	w := engine.NewIdleWorker(b, 1<<20)
	p := newPeer()
	payload, ext := []byte("0123456789abcdef"), []byte{1, 2}
	s := new(engine.Stream)
	b.ReportAllocs()
	for b.Loop() {
		lifecycle(w, s, p, payload, ext)
	}
}

// BenchmarkStreamData sends one 64-byte DATA per op, through the helper
// and through the chain a binding writes by hand, into a ring emptied
// every 1024 frames with the timer stopped.
func BenchmarkStreamData(b *testing.B) {
	payload := make([]byte, 64)
	setup := func(b *testing.B) (*engine.Worker, *engine.Stream) {
		w := engine.NewIdleWorker(b, 1<<20)
		s := new(engine.Stream)
		s.Accept(w, testOrigin, testRouted, w.SupplyInitialID(testRouted))
		_, err := s.OnBegin(newPeer().begin(s.InID(), 0, 0))
		must(err)
		must(s.Begin(nil))
		s.Out.Max = 1 << 30
		s.Out.Trace, s.Out.Auth = 5, 6
		engine.ReadFrames(w, func(frame.FrameType, []byte) {})
		return w, s
	}
	drainEvery := func(b *testing.B, w *engine.Worker, s *engine.Stream, i int) {
		if i&1023 == 1023 {
			b.StopTimer()
			engine.ReadFrames(w, func(frame.FrameType, []byte) {})
			s.Out.Ack = s.Out.Seq
			b.StartTimer()
		}
	}
	b.Run("helper", func(b *testing.B) {
		w, s := setup(b)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := s.Data(frame.FlagsDataMessage, payload, nil); err != nil {
				b.Fatal(err)
			}
			drainEvery(b, w, s, i)
			i++
		}
	})
	b.Run("hand", func(b *testing.B) {
		w, s := setup(b)
		var db frame.DataBuilder
		out := &s.Out
		originID, routedID, replyID := s.OriginID(), s.RoutedID(), s.OutID()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			buf := w.WriteBuffer()
			reserved := int32(len(payload)) + out.Pad
			n, err := db.Wrap(buf, 0, len(buf)).
				OriginID(originID).RoutedID(routedID).StreamID(replyID).
				Sequence(out.Seq).Acknowledge(out.Ack).Maximum(out.Max).
				TraceID(out.Trace).Authorization(out.Auth).
				Flags(uint8(frame.FlagsDataMessage)).BudgetID(out.Budget).Reserved(reserved).
				Payload(payload).BuildLimit()
			if err == nil {
				err = w.Send(frame.FrameData, buf[:n])
			}
			if err != nil {
				b.Fatal(err)
			}
			out.Seq += int64(reserved)
			drainEvery(b, w, s, i)
			i++
		}
	})
}
