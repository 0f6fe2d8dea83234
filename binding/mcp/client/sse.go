package client

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// maxMessage bounds one JSON-RPC message from the upstream, a JSON body or
// one event's data: a larger one fails its request rather than growing a
// buffer without end.
const maxMessage = 16 << 20

// Decoder errors.
var (
	// errTooLarge reports a message or SSE line over maxMessage.
	errTooLarge = errors.New("mcp client: upstream message too large")
	// errNotObject reports a body or event that is not a JSON-RPC object.
	errNotObject = errors.New("mcp client: upstream message is not a JSON-RPC object")
	// errDuplicate reports an upstream message that names one of the
	// JSON-RPC members (jsonrpc, id, method, params, result, error)
	// twice, which two readers could take two ways.
	errDuplicate = errors.New("mcp client: upstream message names a JSON-RPC member twice")
	// errTrailing reports a JSON body with more than whitespace after
	// its value.
	errTrailing = errors.New("mcp client: upstream JSON body has bytes after its message")
)

// bodyReader turns an upstream response body, application/json or
// text/event-stream, into its JSON-RPC messages. A JSON body's message is
// held until the body is over (its Content-Length reached, or the
// response's END): only whitespace may follow it, so that the body has the
// one reading JSON.parse and encoding/json give it, which reject a body
// with anything else after its value.
type bodyReader struct {
	sse   bool
	p     jsonrpc.EventReader
	json  []byte // the JSON body so far
	t     jsonrpc.Tracker
	end   int   // where the JSON body's value ends in json, once complete
	state uint8 // bodyReading, bodyHeld or bodyGiven
}

// The states of a JSON body, one after the other.
const (
	bodyReading uint8 = iota // its value is not complete yet
	bodyHeld                 // its value is complete, held until the body is over
	bodyGiven                // … and was returned
)

func (r *bodyReader) reset(sse bool) {
	r.sse, r.state, r.end = sse, bodyReading, 0
	r.p.Reset()
	r.p.Limit = maxMessage
	r.json = r.json[:0]
	r.t.Reset()
}

// held reports a JSON body's message that waits for the body to end: a
// sink's onBody at the response's END (with no bytes) returns it.
func (r *bodyReader) held() bool { return r.state == bodyHeld }

// next consumes b, bytes of a response body (over: with them the body is
// over), up to the end of the next message and returns the bytes consumed
// and the message, valid until the next call; msg is nil when b ended
// first. Empty events (priming, keep-alive) are skipped.
func (r *bodyReader) next(b []byte, over bool) (int, []byte, error) {
	if r.sse {
		n := 0
		for n < len(b) {
			m, data, err := r.p.Next(b[n:])
			n += m
			if err != nil {
				return n, nil, errTooLarge
			}
			if len(bytes.TrimSpace(data)) > 0 {
				return n, data, nil
			}
		}
		return n, nil, nil
	}
	rest := b
	if r.state == bodyReading {
		if len(r.json)+len(b) > maxMessage {
			return 0, nil, errTooLarge
		}
		start := len(r.json)
		r.json = append(r.json, b...)
		n, done, err := r.t.Feed(r.json[start:])
		if err != nil {
			return len(b), nil, err
		}
		if !done {
			return len(b), nil, nil
		}
		r.state, r.end, rest = bodyHeld, start+n, b[n:]
	}
	if jsonrpc.SkipSpace(rest, 0) < len(rest) {
		return len(b), nil, errTrailing
	}
	if r.state != bodyHeld || !over {
		return len(b), nil, nil
	}
	r.state = bodyGiven
	return len(b), r.json[:r.end], nil
}

// message is one decoded JSON-RPC message: the raw bytes of its members,
// aliasing the message.
type message struct {
	id, method, params, result, err []byte
}

// isResponse reports a response (result or error) to a request.
func (m *message) isResponse() bool {
	return m.method == nil && (m.result != nil || m.err != nil)
}

// decode finds the members of msg, the message next has just returned,
// without allocating. A JSON body's message is the one value r's own
// tracker has followed to its end, so its ranges are the members' and
// the message is not scanned again; an event's data is tracked by t.
func (r *bodyReader) decode(t *jsonrpc.Tracker, msg []byte, m *message) error {
	if r.sse || r.state != bodyGiven {
		return decode(t, msg, m)
	}
	return members(&r.t, msg, m)
}

// decode finds the members of msg with t, without allocating.
func decode(t *jsonrpc.Tracker, msg []byte, m *message) error {
	if err := t.Track(msg); err != nil {
		return err
	}
	return members(t, msg, m)
}

// members reads the members of msg from t, which has tracked all of it.
func members(t *jsonrpc.Tracker, msg []byte, m *message) error {
	if !t.Done() || t.Kind() != jsonrpc.KindObject {
		return errNotObject
	}
	if t.Duplicates() != 0 {
		return errDuplicate
	}
	*m = message{
		id:     t.Member(jsonrpc.MemberID).Bytes(msg),
		method: t.Member(jsonrpc.MemberMethod).Bytes(msg),
		params: t.Member(jsonrpc.MemberParams).Bytes(msg),
		result: t.Member(jsonrpc.MemberResult).Bytes(msg),
		err:    t.Member(jsonrpc.MemberError).Bytes(msg),
	}
	if m.method != nil && (len(m.method) < 2 || m.method[0] != '"') {
		return fmt.Errorf("mcp client: method is not a string: %.40s", m.method)
	}
	return nil
}

// number reads a JSON number as an int64 (fractions truncated), ok false
// when b is not a number.
func number(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var n int64
	digits := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			if c == '.' || c == 'e' || c == 'E' {
				break
			}
			return 0, false
		}
		if n < 1<<58 {
			n = n*10 + int64(c-'0')
		}
		digits++
	}
	if digits == 0 {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}
