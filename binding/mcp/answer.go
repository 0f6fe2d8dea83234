package mcp

import (
	"time"

	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/freelist"
)

// Bounds on a binding's answer streams on one worker.
const (
	// AnswerTimeout is how long an answer may take: one its application
	// has not taken (replied to) by then is given up, so that an
	// application that never grants credit or replies holds no stream.
	AnswerTimeout = 30 * time.Second
	// MaxAnswers is how many answers may be open at once; past it an
	// answer is not sent, and logged.
	MaxAnswers = 4096
)

// Answers opens a binding's clientResponse streams of its own on one
// worker: each answers a request that an application sent its client
// (McpFlushEx clientRequest) with BEGIN McpBeginEx.clientResponse
// {sessionId, id, error, contentLength}, DATA the result or error object as
// the application's credit allows, then END. The application's reply ends
// once its upstream took the answer, or is RESET (with McpResetEx error)
// when it could not. The server kind sends its client's answers so, and
// both the server and the proxy kind send the errors they answer for a
// client request that cannot reach the client.
type Answers struct {
	w        *engine.Worker
	originID int64
	typeID   int32
	name     string // the binding's, for the log
	b        McpBeginExBuilder
	resetEx  McpResetEx
	free     []*answer
	open     int
	msg      []byte
}

// Init readies a for the binding originID, named name, on w, whose mcp
// type id is typeID.
func (a *Answers) Init(w *engine.Worker, originID int64, typeID int32, name string) {
	a.w, a.originID, a.typeID, a.name = w, originID, typeID, name
}

// Open answers id (JSON text) of session sid (nil: none) to the binding
// exitID with data, the result object or, isErr, the error object; trace
// and auth are the answer's frames'. It reports false when the answer
// was not sent: MaxAnswers are open, or the BEGIN was refused.
func (a *Answers) Open(exitID int64, sid, id []byte, isErr bool, data []byte, trace, auth int64) bool {
	w := a.w
	if a.open >= MaxAnswers {
		w.Logger().Warn("mcp: client answer not sent: too many open", "binding", a.name, "id", string(id))
		return false
	}
	s := freelist.Pop(&a.free)
	if s == nil {
		s = &answer{set: a}
		s.fn, s.timeFn = s.onFrame, s.onTimeout
	}
	s.data, s.sent = append(s.data[:0], data...), 0
	s.Connect(w, a.originID, exitID, w.SupplyInitialID(exitID), s.fn)
	s.Out.Trace, s.Out.Auth = trace, auth
	s.In.Trace = trace
	var e uint8
	if isErr {
		e = 1
	}
	err := s.BeginWith(0, func(b *frame.BeginBuilder) {
		eb := a.b.WrapSlot(b.ExtensionBuffer()).TypeID(a.typeID)
		SetSessionID(eb.ClientResponse(), sid, sid == nil).IDBytes(id).Error(e).ContentLength(int32(len(data)))
		b.ExtensionDone(eb.BuildLimit())
	})
	if err != nil {
		w.Logger().Warn("mcp: client answer not sent", "binding", a.name, "id", string(id), "error", err)
		s.recycle()
		return false
	}
	a.open++
	s.live = true
	s.timer = w.TimerAt(w.Now().Add(AnswerTimeout), s.timeFn)
	return true
}

// Error answers id of session sid to exitID with the error {code,
// message}, as Open does.
func (a *Answers) Error(exitID int64, sid, id []byte, code int, message string, trace, auth int64) bool {
	e := jsonrpc.AppendError(a.msg[:0], int64(code), message)
	a.msg = e
	return a.Open(exitID, sid, id, true, e, trace, auth)
}

// Unasked answers, as Open does, a request (id, method) to a client that
// no one can be asked for, such as a proxy's own hydrate session or a
// 2026-07-28 listen: a ping, which asks only whether the client is there,
// gets an empty result (go-sdk's KeepAlive closes a session whose ping
// fails); anything else -32601, as a client without the capability.
func (a *Answers) Unasked(exitID int64, sid, id, method []byte, trace, auth int64) bool {
	if string(method) == "ping" {
		return a.Open(exitID, sid, id, false, emptyResult, trace, auth)
	}
	return a.Error(exitID, sid, id, int(jsonrpc.CodeMethodNotFound), "Method not found", trace, auth)
}

var emptyResult = []byte("{}")

// Opened reports how many answers are open.
func (a *Answers) Opened() int { return a.open }

// answer is one answer stream: Out the answer, In the application's reply.
type answer struct {
	engine.Stream
	set    *Answers
	data   []byte
	sent   int
	live   bool // opened, not yet released
	timer  int64
	fn     engine.MessageConsumer
	timeFn func()
}

// keptAnswer is the capacity of an answer's buffer kept for the next.
const keptAnswer = 64 << 10

// answerFrameRoom is what a DATA frame takes besides its payload.
const answerFrameRoom = 256

func (s *answer) onFrame(t frame.FrameType, buf []byte) {
	a := s.set
	switch t {
	case frame.FrameWindow:
		if _, err := s.OnWindow(buf); streams.Received(err, s.abort) {
			s.send()
		}
	case frame.FrameBegin:
		_, _ = s.OnBegin(buf)
	case frame.FrameData:
		_, _ = s.OnData(buf) // the reply carries none
	case frame.FrameFlush:
		_, _ = s.OnFlush(buf)
	case frame.FrameEnd:
		_, _ = s.OnEnd(buf) // In closes either way
		s.abort()           // the application took the answer before all of it
	case frame.FrameAbort:
		_, _ = s.OnAbort(buf) // In closes either way
		s.abort()
	case frame.FrameReset:
		r, err := s.OnReset(buf) // Out closes either way
		msg := "refused"
		if err == nil {
			if ext := r.Extension(); a.resetEx.TryWrap(ext, 0, len(ext)) && a.resetEx.TypeID() == a.typeID &&
				a.resetEx.Kind() == McpResetExKindError {
				if e := a.resetEx.Error(); e.HasMessage() {
					msg = string(e.Message())
				}
			}
		}
		a.w.Logger().Warn("mcp: the application refused a client answer", "binding", a.name, "error", msg)
		if !s.In.Closed() {
			s.unsent(frame.FrameReset, s.Reset(nil))
		}
	}
	s.release()
}

// send sends what the window allows of the answer, then ends it.
func (s *answer) send() {
	if s.Out.Closed() {
		return
	}
	max := s.set.w.MaxFrame() - answerFrameRoom
	for s.sent < len(s.data) {
		n := int(min(s.Out.Available()-int64(s.Out.Pad), int64(len(s.data)-s.sent), int64(max)))
		if n <= 0 {
			return
		}
		if err := s.Data(frame.FlagDataInit|frame.FlagDataFin, s.data[s.sent:s.sent+n], nil); err != nil {
			s.abort()
			return
		}
		s.sent += n
	}
	s.unsent(frame.FrameEnd, s.End(nil))
}

// abort aborts the answer while it is still being sent.
func (s *answer) abort() {
	if !s.Out.Closed() {
		s.unsent(frame.FrameAbort, s.Abort(nil))
	}
}

// onTimeout gives up an answer its application has not taken in time.
func (s *answer) onTimeout() {
	s.timer = 0
	s.set.w.Logger().Warn("mcp: client answer not taken in time", "binding", s.set.name, "stream", s.OutID())
	s.abort()
	if !s.In.Closed() {
		s.unsent(frame.FrameReset, s.Reset(nil))
	}
	s.release()
}

// release recycles the answer once both directions are over.
func (s *answer) release() {
	if !s.live || !s.Closed() {
		return
	}
	a := s.set
	s.live = false
	a.w.Disarm(&s.timer)
	a.open--
	s.recycle()
}

func (s *answer) recycle() {
	s.data, s.sent = s.data[:0], 0
	if cap(s.data) > keptAnswer {
		s.data = nil
	}
	s.set.free = append(s.set.free, s)
}

func (s *answer) unsent(t frame.FrameType, err error) {
	if err != nil {
		s.set.w.Logger().Warn("mcp: frame not sent", "binding", s.set.name, "frame", t, "stream", s.OutID(), "err", err)
	}
}
