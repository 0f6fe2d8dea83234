package test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// Register adds the test binding type to the registry; a second call does
// nothing. The type is for scripts, so it is not in the default set that
// binding/all links into sluice: the spec runner registers it, as Zilla
// keeps its test binding on the test classpath only.
func Register() { registerOnce.Do(register) }

var registerOnce sync.Once

func register() {
	binding.Register(binding.Info{
		Type:    "test",
		Kinds:   []string{"proxy"},
		Options: json.RawMessage(`{"type": "object", "properties": {"delay": {"type": "string"}}, "additionalProperties": false}`),
		New:     func() engine.Binding { return Binding{} },
	})
}

// Configuration errors, matched with errors.Is.
var (
	// ErrNoExit reports a proxy without an exit, or whose exit names no
	// binding the engine knows.
	ErrNoExit = errors.New("test: kind proxy requires an exit")
	// ErrKind reports a kind other than proxy.
	ErrKind = errors.New("test: unsupported kind")
	// ErrDelay reports a delay option that is not a duration.
	ErrDelay = errors.New("test: invalid delay")
)

// signalBegin is the id of the SIGNAL that releases a delayed BEGIN.
const signalBegin int32 = 1

// options are the binding's options.
type options struct {
	// Delay holds each BEGIN back for this long, e.g. 50ms or PT0.05S.
	Delay string `yaml:"delay"`
}

// Binding is the test binding type.
type Binding struct{}

// Attach checks the configuration and returns the handler for one worker.
func (Binding) Attach(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error) {
	if cfg.Kind != "proxy" {
		return nil, fmt.Errorf("%w %q: only proxy", ErrKind, cfg.Kind)
	}
	if cfg.ExitID == 0 {
		if cfg.Config != nil && cfg.Config.Exit != "" {
			return nil, fmt.Errorf("%w: exit %q names no binding", ErrNoExit, cfg.Config.Exit)
		}
		return nil, ErrNoExit
	}
	var opts options
	raw := cfg.Options()
	if err := raw.Decode(&opts); err != nil {
		return nil, err
	}
	delay, err := parseDelay(opts.Delay)
	if err != nil {
		return nil, fmt.Errorf("%w %q at %s: %w", ErrDelay, opts.Delay, raw.Where("delay"), err)
	}
	return &Handler{w: w, id: cfg.ID, exitID: cfg.ExitID, delay: delay}, nil
}

// parseDelay reads a Go duration ("50ms") or an ISO-8601 one ("PT0.05S");
// empty means no delay.
func parseDelay(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	var d time.Duration
	var err error
	if s[0] == 'P' || s[0] == 'p' {
		d, err = parseISO8601(s)
	} else {
		d, err = time.ParseDuration(s)
	}
	if err == nil && d < 0 {
		err = errors.New("negative")
	}
	return d, err
}

// parseISO8601 reads the ISO-8601 durations with an exact length:
// P[nW][nD][T[nH][nM][nS]], each n a decimal number that may have a
// fraction. Years and months have no fixed length and are refused.
func parseISO8601(s string) (time.Duration, error) {
	units := []struct {
		designator byte
		time       bool
		unit       float64
	}{
		{'W', false, float64(7 * 24 * time.Hour)},
		{'D', false, float64(24 * time.Hour)},
		{'H', true, float64(time.Hour)},
		{'M', true, float64(time.Minute)},
		{'S', true, float64(time.Second)},
	}
	rest := strings.ToUpper(s[1:])
	inTime, next, seen := false, 0, false
	total := 0.0
	for rest != "" {
		if rest[0] == 'T' {
			if inTime {
				return 0, errors.New("second T")
			}
			inTime, rest = true, rest[1:]
			if rest == "" {
				return 0, errors.New("nothing after T")
			}
			continue
		}
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.' || rest[i] == ',') {
			i++
		}
		if i == 0 || i == len(rest) {
			return 0, fmt.Errorf("expected a number and a designator at %q", rest)
		}
		n, err := strconv.ParseFloat(strings.ReplaceAll(rest[:i], ",", "."), 64)
		if err != nil {
			return 0, fmt.Errorf("bad number %q", rest[:i])
		}
		k := next
		for k < len(units) && (units[k].designator != rest[i] || units[k].time != inTime) {
			k++
		}
		if k == len(units) {
			return 0, fmt.Errorf("unexpected designator %q", rest[i])
		}
		total += n * units[k].unit
		next, seen, rest = k+1, true, rest[i+1:]
	}
	if !seen {
		return 0, errors.New("no duration after P")
	}
	if total >= math.MaxInt64 {
		return 0, errors.New("too long")
	}
	return time.Duration(math.Round(total)), nil
}

// Handler is the test binding attached to one worker. Its flyweights
// are reused for every stream it forwards.
type Handler struct {
	w      *engine.Worker
	id     int64
	exitID int64
	delay  time.Duration

	header frame.Frame
	begin  frame.Begin
	signal frame.Signal
}

// NewStream accepts every stream; the consumer it returns opens the
// stream to the exit when the BEGIN arrives.
func (h *Handler) NewStream(t frame.FrameType, buf []byte) engine.MessageConsumer {
	s := &stream{h: h}
	if !streams.Accept(&s.initiator, h.w, &h.begin, buf) {
		return nil
	}
	return s.onInitiator
}

// stream is one proxied stream: the initiator's stream to this binding
// and the binding's stream to the exit, as Zilla's test binding pairs a
// source and a target. Each frame one side receives is sent on the other
// with the same fields; the positions it carries are those of the side
// it goes out on, which match the frame's as long as both peers keep to
// flow control.
type stream struct {
	h         *Handler
	initiator engine.Stream // receives the initial direction, sends the reply
	exit      engine.Stream // sends the initial direction, receives the reply

	// A delayed BEGIN, the frames that arrived after it, and the id of
	// the SIGNAL that releases them.
	begin    []byte
	held     []heldFrame
	cancelID int64
}

type heldFrame struct {
	t   frame.FrameType
	buf []byte
}

// onInitiator receives the initiator's initial frames and the throttle
// frames of the reply to it, and SIGNALs addressed to the reply.
func (s *stream) onInitiator(t frame.FrameType, buf []byte) {
	switch {
	case s.begin != nil:
		s.onDelayed(t, buf)
	case t == frame.FrameBegin && s.h.delay > 0:
		s.delayBegin(buf)
	case t == frame.FrameBegin:
		s.open(buf)
	case t != frame.FrameSignal:
		s.forward(&s.initiator, &s.exit, t, buf)
	}
}

// onExit receives the exit's reply frames and the throttle frames of the
// binding's initial stream to it.
func (s *stream) onExit(t frame.FrameType, buf []byte) {
	s.forward(&s.exit, &s.initiator, t, buf)
}

// open opens the stream to the exit with the initiator's BEGIN; the
// stream fails if that cannot be done.
func (s *stream) open(buf []byte) {
	h := s.h
	s.exit.Connect(h.w, h.id, h.exitID, h.w.SupplyInitialID(h.exitID), s.onExit)
	s.forward(&s.initiator, &s.exit, frame.FrameBegin, buf)
}

// forward passes a frame from received on to, and fails the stream when
// it cannot; a frame for a direction already closed is dropped. Whatever
// the frame, those sent for it carry its trace id and authorization.
func (s *stream) forward(from, to *engine.Stream, t frame.FrameType, buf []byte) {
	h := &s.h.header
	if !h.TryWrap(buf, 0, len(buf)) {
		s.fail(0, engine.ErrMalformedFrame)
		return
	}
	traceID := h.TraceID()
	to.Out.Trace, to.Out.Auth = traceID, h.Authorization()
	to.In.Trace, to.In.Auth = traceID, to.Out.Auth
	if err := relay(from, to, t, buf); err != nil && !errors.Is(err, engine.ErrStreamClosed) {
		s.fail(traceID, err)
	}
}

// relay sends on to the frame from received, with to's ids and positions
// and every other field as it came: BEGIN's trace id, authorization,
// affinity and extension (its redirected id, which names a stream of the
// previous hop, is not passed on); DATA's flags, reserved, payload (null
// stays null, empty stays empty) and extension; and so on. A WINDOW
// hands the credit it brings on to the other side.
func relay(from, to *engine.Stream, t frame.FrameType, buf []byte) error {
	switch t {
	case frame.FrameBegin:
		b, err := from.OnBegin(buf)
		if err != nil {
			return err
		}
		to.Out.Seq, to.Out.Ack, to.Out.Max = b.Sequence(), b.Acknowledge(), b.Maximum()
		return to.BeginWith(b.Affinity(), func(fb *frame.BeginBuilder) { fb.Extension(b.Extension()) })
	case frame.FrameData:
		d, err := from.OnData(buf)
		if err != nil {
			return err
		}
		return to.DataWith(frame.Flags(d.Flags()), d.Reserved(), func(db *frame.DataBuilder) {
			if d.HasPayload() {
				db.Payload(d.Payload())
			} else {
				db.PayloadNull()
			}
			db.Extension(d.Extension())
		})
	case frame.FrameFlush:
		f, err := from.OnFlush(buf)
		if err != nil {
			return err
		}
		return to.FlushWith(f.Reserved(), func(fb *frame.FlushBuilder) { fb.Extension(f.Extension()) })
	case frame.FrameEnd:
		e, err := from.OnEnd(buf)
		if err != nil {
			return err
		}
		return to.EndWith(func(eb *frame.EndBuilder) { eb.BudgetID(e.BudgetID()).Reserved(e.Reserved()).Extension(e.Extension()) })
	case frame.FrameAbort:
		a, err := from.OnAbort(buf)
		return unless(err, to.Abort, a.Extension())
	case frame.FrameWindow:
		w, err := from.OnWindow(buf)
		if err != nil {
			return err
		}
		to.In.Ack, to.In.Max, to.In.Pad = w.Acknowledge(), w.Maximum(), w.Padding()
		to.In.Budget, to.In.Min, to.In.Cap = w.BudgetID(), w.Minimum(), w.Capabilities()
		return to.Window()
	case frame.FrameReset:
		r, err := from.OnReset(buf)
		return unless(err, to.Reset, r.Extension())
	case frame.FrameChallenge:
		c, err := from.OnChallenge(buf)
		return unless(err, to.Challenge, c.Extension())
	}
	return nil
}

// unless sends a frame with extension ext through send, unless receiving
// the frame it answers failed with err.
func unless(err error, send func(ext []byte) error, ext []byte) error {
	if err != nil {
		return err
	}
	return send(ext)
}

// delayBegin holds the BEGIN back and asks the worker for a SIGNAL to the
// throttle of the reply, which is this stream's own consumer.
func (s *stream) delayBegin(buf []byte) {
	h := s.h
	var traceID int64
	if h.header.TryWrap(buf, 0, len(buf)) {
		traceID = h.header.TraceID()
	}
	s.begin = append([]byte(nil), buf...)
	in := &s.initiator
	s.cancelID = h.w.SignalAt(h.w.Now().Add(h.delay), in.OriginID(), in.RoutedID(), in.ReplyID(), traceID, signalBegin, 0)
}

// onDelayed handles a frame that arrives while the BEGIN waits: the
// SIGNAL releases it, anything else waits behind it.
func (s *stream) onDelayed(t frame.FrameType, buf []byte) {
	switch t {
	case frame.FrameSignal:
		h := s.h
		if h.signal.TryWrap(buf, 0, len(buf)) && h.signal.SignalID() == signalBegin && h.signal.CancelID() == s.cancelID {
			s.release()
		}
	case frame.FrameRedirect:
	case frame.FrameReset:
		// The engine forgets the reply's throttle as this RESET arrives,
		// and with it the address of the SIGNAL: release now.
		s.h.w.Cancel(s.cancelID)
		s.held = append(s.held, heldFrame{t: t, buf: append([]byte(nil), buf...)})
		s.release()
	default:
		s.held = append(s.held, heldFrame{t: t, buf: append([]byte(nil), buf...)})
	}
}

// release opens the stream to the exit with the delayed BEGIN and then
// forwards the frames that arrived meanwhile, in order.
func (s *stream) release() {
	begin, held := s.begin, s.held
	s.begin, s.held = nil, nil
	s.open(begin)
	for _, f := range held {
		s.onInitiator(f.t, f.buf)
	}
}

// fail tears down a stream the binding could not forward a frame of:
// every direction still open is reset at its sender and aborted at its
// receiver, as far as each has been opened. The frames carry the trace id
// of the frame that could not be forwarded.
func (s *stream) fail(traceID int64, cause error) {
	in, ex := &s.initiator, &s.exit
	in.In.Trace, in.Out.Trace, ex.In.Trace, ex.Out.Trace = traceID, traceID, traceID, traceID
	errs := []error{cause, in.Reset(nil)}
	if ex.Out.Opening() {
		errs = append(errs, ex.Abort(nil), ex.Reset(nil))
	}
	if in.Out.Opening() {
		errs = append(errs, in.Abort(nil))
	}
	s.h.w.Logger().Debug("test: stream torn down", "stream", in.InitialID(), "err", errors.Join(errs...))
}

var (
	_ engine.Binding = Binding{}
	_ engine.Handler = (*Handler)(nil)
)
