package engine

import (
	"encoding/binary"

	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/telemetry"
)

// streamMetrics are one binding's stream counters on one worker, recorded
// for every frame the binding receives or sends (telemetry.Stream*).
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
		m.opensReceived.Inc()
		m.activeReceived.Inc()
	case frame.FrameData:
		m.dataReceived.Add(payloadLength(buf))
	case frame.FrameEnd:
		m.closesReceived.Inc()
		m.activeReceived.Dec()
	case frame.FrameAbort:
		m.errorsReceived.Inc()
		m.activeReceived.Dec()
	case frame.FrameReset:
		m.errorsReceived.Inc()
	}
}

func (m *streamMetrics) sent(t frame.FrameType, buf []byte) {
	if m == nil {
		return
	}
	switch t {
	case frame.FrameBegin:
		m.opensSent.Inc()
		m.activeSent.Inc()
	case frame.FrameData:
		m.dataSent.Add(payloadLength(buf))
	case frame.FrameEnd:
		m.closesSent.Inc()
		m.activeSent.Dec()
	case frame.FrameAbort:
		m.errorsSent.Inc()
		m.activeSent.Dec()
	case frame.FrameReset:
		m.errorsSent.Inc()
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
