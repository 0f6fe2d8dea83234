// Package frame holds the core stream frames as zero-copy flyweights,
// generated from idl/core.idl, plus the frame-type vocabulary.
//
// Every frame starts with the 68-byte common header [Frame] (originId,
// routedId, streamId, sequence, acknowledge, maximum, timestamp, traceId,
// authorization), laid out exactly as Zilla's, native (little-endian) byte
// order. Stream frames — [Begin], [Data], [End], [Abort], [Flush] — run in
// the direction of their stream; throttle frames — [Reset], [Window],
// [Signal], [Challenge], [Redirect] — run against it. The frame type is the
// ring record's message type ([FrameType]), not a field of the frame.
//
// Readers are views: Wrap checks the lengths once and getters read in place,
// so a worker keeps one reader and one builder per type and allocates
// nothing per frame.
//
//	var data frame.Data
//	if err := data.Wrap(record, 0, len(record)); err != nil {
//		return err
//	}
//	payload := data.Payload() // aliases record: valid until it is released
//
//	var b frame.DataBuilder
//	d, err := b.Wrap(buf, 0, len(buf)).
//		OriginID(origin).RoutedID(routed).StreamID(id).
//		Sequence(seq).Acknowledge(ack).Maximum(max).
//		BudgetID(0).Reserved(int32(len(p) + padding)).
//		Payload(p).
//		Build()
//
// The engine writes the frames a stream sends most, WINDOW, END and DATA
// with an extension already in bytes, with [PutWindow], [PutEnd] and
// [PutData] instead: a [Header] and the frame's own fields stored at
// their offsets after one length check, the same bytes the builders
// write without their per-field bookkeeping.
package frame
