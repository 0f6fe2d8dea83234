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
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/frame"
	"go.yaml.in/yaml/v3"
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

// Forwarding failures; either one tears the stream down.
var (
	errTooLarge  = errors.New("test: frame larger than the write buffer")
	errMalformed = errors.New("test: malformed frame")
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
		return nil, fmt.Errorf("%w %q at %s: %w", ErrDelay, opts.Delay, where(raw, "delay"), err)
	}
	return &Handler{w: w, id: cfg.ID, exitID: cfg.ExitID, delay: delay}, nil
}

// where names the option key of raw as file:line: path, at the key's own
// line when the YAML node has it.
func where(raw *config.Raw, key string) string {
	path := raw.Path() + "." + key
	pos := raw.Pos()
	if n := raw.Node(); n != nil {
		if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
			n = n.Content[0]
		}
		for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				pos.Line = n.Content[i].Line
			}
		}
	}
	if pos.File == "" {
		return path
	}
	return pos.String() + ": " + path
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

// Handler is the test binding attached to one worker. Its flyweights and
// builders are reused for every frame of every stream it forwards.
type Handler struct {
	w      *engine.Worker
	id     int64
	exitID int64
	delay  time.Duration

	header frame.Frame
	begin  frame.Begin
	signal frame.Signal
	resetB frame.ResetBuilder
	abortB frame.AbortBuilder
}

// NewStream accepts every stream; the consumer it returns opens the
// stream to the exit when the BEGIN arrives.
func (h *Handler) NewStream(t frame.FrameType, buf []byte) engine.MessageConsumer {
	if !h.begin.TryWrap(buf, 0, len(buf)) {
		return nil
	}
	s := &stream{
		h:         h,
		originID:  h.begin.OriginID(),
		initialID: h.begin.StreamID(),
		replyID:   engine.ReplyID(h.begin.StreamID()),
	}
	return s.onInitiator
}

// stream is one proxied stream: the initiator's stream to this binding
// (initialID and replyID) and the binding's stream to the exit
// (exitInitialID and exitReplyID). Frames run through unchanged but for
// their ids, so the binding keeps no credit of its own; it only notes the
// last positions seen, for the frames that tear a failed stream down.
type stream struct {
	h             *Handler
	originID      int64
	initialID     int64
	replyID       int64
	exitInitialID int64
	exitReplyID   int64
	state         uint8

	initial position // the initial direction, as last seen
	reply   position // the reply direction, as last seen

	// A delayed BEGIN, the frames that arrived after it, and the id of
	// the SIGNAL that releases them.
	begin    []byte
	held     []heldFrame
	cancelID int64
}

const (
	delaying      uint8 = 1 << iota // the BEGIN waits for its SIGNAL
	initialOpened                   // the BEGIN went to the exit
	initialClosed                   // END, ABORT or RESET went through
	replyOpened                     // the exit's reply BEGIN went back
	replyClosed                     // END, ABORT or RESET went through
)

type position struct {
	seq, ack int64
	max      int32
}

func (p *position) note(h *frame.Frame) {
	p.seq, p.ack, p.max = h.Sequence(), h.Acknowledge(), h.Maximum()
}

type heldFrame struct {
	t   frame.FrameType
	buf []byte
}

// onInitiator receives the initiator's initial frames and the throttle
// frames of the reply to it, and SIGNALs addressed to the reply.
func (s *stream) onInitiator(t frame.FrameType, buf []byte) {
	if s.state&delaying != 0 {
		s.onDelayed(t, buf)
		return
	}
	switch t {
	case frame.FrameBegin:
		if s.h.delay > 0 {
			s.delayBegin(buf)
			return
		}
		s.open(buf)
	case frame.FrameData, frame.FrameFlush:
		s.toExit(t, buf, s.exitInitialID, &s.initial, 0)
	case frame.FrameEnd, frame.FrameAbort:
		s.toExit(t, buf, s.exitInitialID, &s.initial, initialClosed)
	case frame.FrameWindow, frame.FrameChallenge:
		s.toExit(t, buf, s.exitReplyID, &s.reply, 0)
	case frame.FrameReset:
		s.toExit(t, buf, s.exitReplyID, &s.reply, replyClosed)
	}
}

// onExit receives the exit's reply frames and the throttle frames of the
// binding's initial stream to it.
func (s *stream) onExit(t frame.FrameType, buf []byte) {
	switch t {
	case frame.FrameBegin:
		s.toInitiator(t, buf, s.replyID, &s.reply, replyOpened)
	case frame.FrameData, frame.FrameFlush:
		s.toInitiator(t, buf, s.replyID, &s.reply, 0)
	case frame.FrameEnd, frame.FrameAbort:
		s.toInitiator(t, buf, s.replyID, &s.reply, replyClosed)
	case frame.FrameWindow, frame.FrameChallenge:
		s.toInitiator(t, buf, s.initialID, &s.initial, 0)
	case frame.FrameReset:
		s.toInitiator(t, buf, s.initialID, &s.initial, initialClosed)
	}
}

// open sends the initiator's BEGIN to the exit as the BEGIN of a new
// stream, and refuses the initiator's stream if that fails.
func (s *stream) open(buf []byte) {
	h := s.h
	s.exitInitialID = h.w.SupplyInitialID(h.exitID)
	s.exitReplyID = engine.ReplyID(s.exitInitialID)
	if h.header.TryWrap(buf, 0, len(buf)) {
		s.initial.note(&h.header)
	}
	out, err := h.rewrite(frame.FrameBegin, buf, h.id, h.exitID, s.exitInitialID)
	if err == nil {
		err = h.w.NewStream(out, s.onExit)
	}
	if err != nil {
		s.fail()
		return
	}
	s.state |= initialOpened
}

// toExit forwards a frame of the initiator's to the exit's stream id,
// then marks flag; once the direction it belongs to is closed it drops
// the frame.
func (s *stream) toExit(t frame.FrameType, buf []byte, id int64, pos *position, flag uint8) {
	if s.state&initialOpened == 0 || s.state&directionClosed(t, true) != 0 {
		return
	}
	s.forward(t, buf, s.h.id, s.h.exitID, id, pos, flag)
}

// toInitiator forwards a frame of the exit's to the initiator's stream
// id, then marks flag.
func (s *stream) toInitiator(t frame.FrameType, buf []byte, id int64, pos *position, flag uint8) {
	if s.state&directionClosed(t, false) != 0 {
		return
	}
	s.forward(t, buf, s.originID, s.h.id, id, pos, flag)
}

// directionClosed returns the closed flag of the direction a frame of
// type t belongs to: the initiator sends the initial direction's frames
// and the reply's throttle frames, the exit the others.
func directionClosed(t frame.FrameType, fromInitiator bool) uint8 {
	if t.IsThrottle() == fromInitiator {
		return replyClosed
	}
	return initialClosed
}

func (s *stream) forward(t frame.FrameType, buf []byte, originID, routedID, id int64, pos *position, flag uint8) {
	h := s.h
	out, err := h.rewrite(t, buf, originID, routedID, id)
	if err == nil {
		pos.note(&h.header)
		err = h.w.Send(t, out)
	}
	if err != nil {
		s.fail()
		return
	}
	s.state |= flag
}

// rewrite copies the frame in buf into the worker's write buffer and sets
// its ids; everything else stays as the sender wrote it.
func (h *Handler) rewrite(t frame.FrameType, buf []byte, originID, routedID, id int64) ([]byte, error) {
	out := h.w.WriteBuffer()
	if len(buf) > len(out) {
		return nil, errTooLarge
	}
	n := copy(out, buf)
	out = out[:n]
	if !h.header.TryWrap(out, 0, n) {
		return nil, errMalformed
	}
	h.header.SetOriginID(originID)
	h.header.SetRoutedID(routedID)
	h.header.SetStreamID(id)
	if t == frame.FrameBegin {
		// A redirected id names a stream of the previous hop, which
		// means nothing to the next.
		if !h.begin.TryWrap(out, 0, n) {
			return nil, errMalformed
		}
		h.begin.SetRedirectedID(0)
	}
	return out, nil
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
	s.state |= delaying
	s.cancelID = h.w.SignalAt(h.w.Now().Add(h.delay), s.originID, h.id, s.replyID, traceID, signalBegin, 0)
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
	s.state &^= delaying
	begin, held := s.begin, s.held
	s.begin, s.held = nil, nil
	s.open(begin)
	for _, f := range held {
		s.onInitiator(f.t, f.buf)
	}
}

// fail tears down a stream the binding could not forward a frame of:
// every direction still open is reset at its sender and aborted at its
// receiver, as far as each has been opened.
func (s *stream) fail() {
	h := s.h
	if s.state&initialClosed == 0 {
		s.state |= initialClosed
		h.sendReset(s.originID, h.id, s.initialID, s.initial)
		if s.state&initialOpened != 0 {
			h.sendAbort(h.id, h.exitID, s.exitInitialID, s.initial)
		}
	}
	if s.state&replyClosed == 0 {
		s.state |= replyClosed
		if s.state&initialOpened != 0 {
			h.sendReset(h.id, h.exitID, s.exitReplyID, s.reply)
		}
		if s.state&replyOpened != 0 {
			h.sendAbort(s.originID, h.id, s.replyID, s.reply)
		}
	}
}

// sendReset and sendAbort are best effort: they run when a send already
// failed, typically on a full ring.
func (h *Handler) sendReset(originID, routedID, id int64, p position) {
	buf := h.w.WriteBuffer()
	n, err := h.resetB.Wrap(buf, 0, len(buf)).
		OriginID(originID).RoutedID(routedID).StreamID(id).
		Sequence(p.seq).Acknowledge(p.ack).Maximum(p.max).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameReset, buf[:n])
	}
}

func (h *Handler) sendAbort(originID, routedID, id int64, p position) {
	buf := h.w.WriteBuffer()
	n, err := h.abortB.Wrap(buf, 0, len(buf)).
		OriginID(originID).RoutedID(routedID).StreamID(id).
		Sequence(p.seq).Acknowledge(p.ack).Maximum(p.max).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameAbort, buf[:n])
	}
}

var (
	_ engine.Binding = Binding{}
	_ engine.Handler = (*Handler)(nil)
)
