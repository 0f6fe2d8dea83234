package engine

import (
	"encoding/binary"

	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/telemetry"
)

// streamMetrics are one binding's stream counters on one worker, recorded
// for every frame the binding receives or sends (telemetry.Stream*). Only
// the worker's thread updates them, so they use the owner's updates
// (telemetry.Counter.AddOwned), which spare every frame the locked adds
// that stall the worker.
//
// A frame received is counted before its handler runs. A frame sent with
// Send is counted after it is in the target's ring or the sender's
// backlog, since a refused frame is not counted (a claimed one is counted
// before its Commit publishes it). So the receiver of a frame may handle
// it before its sender has counted it: a reader on another goroutine that
// needs the counts of every frame it has seen waits for the senders'
// workers to end their passes first (Engine.Execute).
type streamMetrics struct {
	opensSent, opensReceived   *telemetry.Counter
	closesSent, closesReceived *telemetry.Counter
	errorsSent, errorsReceived *telemetry.Counter
	dataSent, dataReceived     *telemetry.Counter
	activeSent, activeReceived *telemetry.Gauge
}

func newStreamMetrics(w *telemetry.WorkerMetrics, l telemetry.Labels) *streamMetrics {
	return &streamMetrics{
		opensSent:      w.Counter(telemetry.StreamOpensSent, l),
		opensReceived:  w.Counter(telemetry.StreamOpensReceived, l),
		closesSent:     w.Counter(telemetry.StreamClosesSent, l),
		closesReceived: w.Counter(telemetry.StreamClosesReceived, l),
		errorsSent:     w.Counter(telemetry.StreamErrorsSent, l),
		errorsReceived: w.Counter(telemetry.StreamErrorsReceived, l),
		dataSent:       w.Counter(telemetry.StreamDataSent, l),
		dataReceived:   w.Counter(telemetry.StreamDataReceived, l),
		activeSent:     w.Gauge(telemetry.StreamActiveSent, l),
		activeReceived: w.Gauge(telemetry.StreamActiveReceived, l),
	}
}

// dataLengthOff is where a DATA frame's payload length sits, pinned by the
// frame tests; reading it here spares a flyweight wrap per frame.
const dataLengthOff = 81

func payloadLength(buf []byte) int64 {
	if len(buf) < dataLengthOff+4 {
		return 0
	}
	return int64(max(int32(binary.LittleEndian.Uint32(buf[dataLengthOff:])), 0))
}

func (m *streamMetrics) received(t frame.FrameType, buf []byte) {
	if m == nil {
		return
	}
	switch t {
	case frame.FrameBegin:
		m.opensReceived.IncOwned()
	case frame.FrameData:
		m.dataReceived.AddOwned(payloadLength(buf))
	case frame.FrameEnd:
		m.closesReceived.IncOwned()
	case frame.FrameAbort:
		m.errorsReceived.IncOwned()
	case frame.FrameReset:
		m.errorsReceived.IncOwned()
	}
}

func (m *streamMetrics) sent(t frame.FrameType, buf []byte) {
	if m == nil {
		return
	}
	switch t {
	case frame.FrameBegin:
		m.opensSent.IncOwned()
	case frame.FrameData:
		m.dataSent.AddOwned(payloadLength(buf))
	case frame.FrameEnd:
		m.closesSent.IncOwned()
	case frame.FrameAbort:
		m.errorsSent.IncOwned()
	case frame.FrameReset:
		m.errorsSent.IncOwned()
	}
}

// The active gauges follow the worker's registrations rather than the
// frames: a direction is active from its BEGIN until the engine forgets it,
// which is at its END or ABORT, or at a RESET, after which the engine drops
// what the sender may still send. Counting END and ABORT alone left every
// direction closed by a RESET active for good (an mcp client that has its
// answer RESETs the http client's reply: one more "active" stream per
// call).

// openedSent counts a direction the binding sends as active.
func (m *streamMetrics) openedSent() {
	if m != nil {
		m.activeSent.IncOwned()
	}
}

// closedSent counts a direction the binding sends as no longer active.
func (m *streamMetrics) closedSent() {
	if m != nil {
		m.activeSent.DecOwned()
	}
}

// openedReceived counts a direction the binding receives as active.
func (m *streamMetrics) openedReceived() {
	if m != nil {
		m.activeReceived.IncOwned()
	}
}

// closedReceived counts a direction the binding receives as no longer
// active.
func (m *streamMetrics) closedReceived() {
	if m != nil {
		m.activeReceived.DecOwned()
	}
}

// senderID returns the binding that sends a frame on stream id: the
// initiator (origin) writes the initial direction and the reply's
// throttles, the target (routed) the rest.
func senderID(id, originID, routedID int64, throttle bool) int64 {
	if IsInitial(id) != throttle {
		return originID
	}
	return routedID
}
