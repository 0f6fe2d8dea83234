// Package jsonrpc scans JSON-RPC 2.0 message bodies on the MCP gateway's
// hot path: a streaming brace-depth tracker that finds where a message
// ends and where its routing members lie, without buffering or parsing it.
// It is the gateway's one JSON reader: the MCP kinds and the toolkit
// validate, walk, unquote and quote JSON, and read event streams, with it.
//
// # Tracker
//
// A [Tracker] consumes one message in any number of chunks through
// [Tracker.Feed], a byte-at-a-time state machine that keeps only its
// state between chunks (a few dozen bytes, and one bit per open object or
// array). It reports:
//
//   - whether the top-level value is an object (a request, notification
//     or response), an array (a batch) or something else ([Tracker.Kind]);
//   - when the value is complete ([Tracker.Done]) and where it ends: Feed
//     returns the bytes it consumed, stopping right after the value, so
//     trailing whitespace or a following message is left to the caller
//     (as encoding/json's Decoder leaves it);
//   - for a top-level object, the [Range] of the value of each of the
//     members jsonrpc, id, method, params, result and error (and MCP's
//     resultType and requestState, for a bare result or params), as
//     absolute offsets from the message's first byte, with Start set when
//     the value starts and End when it closes ([Tracker.Member],
//     [Tracker.Members]).
//     [Tracker.ParamsDone] turns true at the byte that closes params, so a
//     client can end its upstream request there. Members of nested
//     objects (a "method" key inside params) are not top-level members;
//     keys are compared after unescaping, so "\u006dethod" is method.
//   - for a top-level object, which of the keys ttlMs, cacheScope and
//     _meta it has ([Tracker.Keys]), without their ranges: the members a
//     2026-07-28 MCP result carries beside resultType, so that a gateway
//     answering a 2025-era client learns in the validating pass whether
//     there is anything to strip.
//
// A top-level number can only be known to end at the byte after it, so a
// message that is a bare number completes at [Tracker.Finish], which a
// caller calls when the body ends (it also reports a body that ended
// inside its value). JSON-RPC messages are objects or arrays, which end at
// their closing byte.
//
// # Validation
//
// The tracker accepts exactly what encoding/json's Valid accepts (RFC 8259
// as Go reads it): no trailing commas, no leading zeros, no control bytes
// in strings, escapes including \uXXXX checked, literals spelled out,
// nesting up to [MaxDepth] (encoding/json's limit; [Options.MaxDepth]
// lowers it). Like encoding/json it accepts strings that are not valid
// UTF-8; [Options.StrictUTF8] rejects them, with utf8.Valid's rules. The
// value's end offset is the one encoding/json's Decoder reports, and a
// rejection is a [*SyntaxError] whose Offset is the offending byte's,
// worded as encoding/json words it:
//
//	jsonrpc: offset 17: invalid character '}' after object key
//
// FuzzTracker holds the tracker to all of this, with encoding/json as
// the oracle, for every input and every split of it into chunks;
// FuzzJSON holds the readers of JSON held whole to it likewise.
//
// # Duplicate members
//
// A top-level object that holds a tracked member twice is valid JSON, and
// by default the last one wins, as in encoding/json: its range replaces
// the first one's (so ParamsDone can turn false again), and
// [Tracker.Duplicates] reports the member. Parsers disagree on which one
// counts (fastjson's Get takes the first), so a gateway should refuse
// such a message (JSON-RPC -32600, Invalid Request) rather than forward
// it: [Options.RejectDuplicates] makes the tracker do so, failing with
// [ErrDuplicate] at the second key ([SyntaxError.Member] names it).
//
// # Lone surrogates
//
// encoding/json, and so [Unquote], decode a \uXXXX escape of a lone
// UTF-16 surrogate as U+FFFD, where JavaScript's JSON.parse keeps it.
// [ReplaceLoneSurrogates] rewrites such escapes in place as \ufffd, so a
// gateway forwards text that every reader reads as it did.
//
// # Reading values
//
// The tracker holds offsets, never bytes: the caller keeps the bytes of
// the ranges it needs (the whole message, or just those ranges as they
// pass). Small values are read from their bytes with helpers that
// allocate nothing in the usual case: [Method] and [Unquote] for strings,
// [Version] for the jsonrpc member, and [ParseID] for the id's kind and
// canonical bytes (the form that identifies it; forward the id in its
// original spelling).
//
// Values that need full parsing, such as a tools/call's params, are
// parsed on their own with github.com/valyala/fastjson: keep one
// fastjson.Parser per worker and call ParseBytes on the range's bytes;
// after its first messages it allocates nothing, and its values are valid
// until its next Parse. Do not use fastjson to find the method or id in
// the whole message: the tracker has already found them, with
// encoding/json's rules for duplicates.
//
// # JSON held whole
//
// A message or value held whole in one buffer is validated by a Tracker
// in one pass: [Tracker.Track] (which also leaves the members' ranges) or
// [Valid]. Once it is known valid, [NextField], [Lookup] and [KeyIs] walk
// an object's members, [NextElement] an array's elements, and
// [StringEnd] finds where a string ends, all without allocating and
// returning sub-slices of their input. They check only what they need to
// find those ends, and never panic on text that is not valid. Of an
// object held in part (the head of a body that streams) they see only
// the members that are complete. [UnquoteTo] decodes a string into a
// buffer of fixed size, and [AppendString] writes one.
//
// # Strings at paths, streamed
//
// A [PathScanner] follows a value streamed in chunks, as a Tracker does,
// and reports where each string at one of a few [Path]s begins (the mcp
// proxy puts a route's prefix on the resource uris of a result there).
// It keeps a bit set of live paths per open container and does not
// validate; the Tracker does that.
//
// # Event streams
//
// An MCP server may answer with a text/event-stream whose events carry
// the JSON-RPC messages; an [EventReader] reads one incrementally and
// returns each event's data, a message to track.
//
// # Costs
//
// Feed allocates nothing, and Reset readies a Tracker for the next message
// without allocating; only a rejection allocates its error. Strings, most
// of a message, are skipped through a bitmap of the bytes that can end
// them, computed for up to 8 KiB of a chunk at a time (with AVX2 on
// amd64, portable Go elsewhere): the end of a string of up to 56 bytes is
// one load and one count of trailing zeros away (see masks.go).
// Below the top level, where only the nesting is tracked, a small fast
// path (in assembly on amd64) runs the common forms of JSON and hands
// anything else back to the full state machine, whose rules and error
// offsets are the only ones (see lane.go). BenchmarkTrackerToolsList runs a 7.7 KB tools/list
// result through it, whole and in 1 KiB chunks.
//
// # Usage
//
//	var t jsonrpc.Tracker // per connection or worker
//	for each message {
//		t.Reset()
//		for each chunk {
//			n, done, err := t.Feed(chunk)
//			// forward chunk[:n]; on err, answer -32700 Parse error
//			if t.ParamsDone() { /* params closed: end the upstream request */ }
//			if done { /* chunk[n:] starts the next message */ }
//		}
//		err := t.Finish() // at the body's end
//	}
//	r := t.Member(jsonrpc.MemberMethod)
//	method, err := jsonrpc.Method(scratch[:0], r.Bytes(msg))
package jsonrpc
