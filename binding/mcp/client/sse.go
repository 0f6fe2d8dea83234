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
)

// sseParser reads an event stream (the WHATWG "event stream
// interpretation") incrementally: lines end with CRLF, LF or CR; data
// fields join with LF; id sets the last event id; retry the reconnection
// time; comments and other fields are skipped. It holds the partial line
// and the event's data between calls and allocates nothing once its
// buffers have grown.
type sseParser struct {
	line    []byte // the line read so far
	data    []byte // the event's data, each line followed by LF
	hasData bool
	lastID  []byte // the last event id, kept across events
	idSeen  bool   // the event had an id field
	retry   int64  // the last retry field in ms, or 0
	skipLF  bool   // the previous line ended with CR: a LF next is its end
}

func (p *sseParser) reset() {
	p.line, p.data, p.lastID = p.line[:0], p.data[:0], p.lastID[:0]
	p.hasData, p.idSeen, p.retry, p.skipLF = false, false, 0, false
}

// next consumes b up to the end of the next event and returns the bytes
// consumed and the event's data (without its final LF), valid until the
// next call; data is nil when b ended before an event did. An event
// without data (the priming event of 2025-11-25: an id and an empty data
// line) is returned with empty, non-nil data.
func (p *sseParser) next(b []byte) (int, []byte, error) {
	i := 0
	for i < len(b) {
		c := b[i]
		if p.skipLF {
			p.skipLF = false
			if c == '\n' {
				i++
				continue
			}
		}
		j := bytes.IndexAny(b[i:], "\r\n")
		if j < 0 {
			if len(p.line)+len(b)-i > maxMessage {
				return i, nil, errTooLarge
			}
			p.line = append(p.line, b[i:]...)
			return len(b), nil, nil
		}
		if len(p.line)+j > maxMessage {
			return i, nil, errTooLarge
		}
		p.line = append(p.line, b[i:i+j]...)
		p.skipLF = b[i+j] == '\r'
		i += j + 1
		if data, ok := p.field(); ok {
			return i, data, nil
		} else if len(p.data) > maxMessage {
			return i, nil, errTooLarge
		}
	}
	return i, nil, nil
}

// field processes the line just read, and reports a dispatched event.
func (p *sseParser) field() ([]byte, bool) {
	line := p.line
	p.line = p.line[:0]
	if len(line) == 0 {
		if !p.hasData {
			p.idSeen = false
			return nil, false
		}
		data := p.data
		if n := len(data); n > 0 && data[n-1] == '\n' {
			data = data[:n-1]
		}
		p.data, p.hasData, p.idSeen = p.data[:0], false, false
		return data[:len(data):len(data)], true
	}
	if line[0] == ':' {
		return nil, false
	}
	name, value := line, line[len(line):]
	if k := bytes.IndexByte(line, ':'); k >= 0 {
		name, value = line[:k], line[k+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		p.data = append(append(p.data, value...), '\n')
		p.hasData = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			p.lastID = append(p.lastID[:0], value...)
			p.idSeen = true
		}
	case "retry":
		var n int64
		for _, c := range value {
			if c < '0' || c > '9' || n > 1<<40 {
				return nil, false
			}
			n = n*10 + int64(c-'0')
		}
		if len(value) > 0 {
			p.retry = n
		}
	}
	return nil, false
}

// bodyReader turns an upstream response body, application/json or
// text/event-stream, into its JSON-RPC messages.
type bodyReader struct {
	sse  bool
	p    sseParser
	json []byte // the JSON body so far
	t    jsonrpc.Tracker
	done bool // the JSON body's message was returned
}

func (r *bodyReader) reset(sse bool) {
	r.sse, r.done = sse, false
	r.p.reset()
	r.json = r.json[:0]
	r.t.Reset()
}

// next consumes b up to the end of the next message and returns the bytes
// consumed and the message, valid until the next call; msg is nil when b
// ended first. Empty events (priming, keep-alive) are skipped.
func (r *bodyReader) next(b []byte) (int, []byte, error) {
	if r.sse {
		n := 0
		for n < len(b) {
			m, data, err := r.p.next(b[n:])
			n += m
			if err != nil {
				return n, nil, err
			}
			if len(bytes.TrimSpace(data)) > 0 {
				return n, data, nil
			}
		}
		return n, nil, nil
	}
	if r.done {
		return len(b), nil, nil // trailing whitespace (or junk) after the message
	}
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
	r.done = true
	return len(b), r.json[:start+n], nil
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
	if r.sse || !r.done {
		return decode(t, msg, m)
	}
	return members(&r.t, msg, m)
}

// decode finds the members of msg with t, without allocating.
func decode(t *jsonrpc.Tracker, msg []byte, m *message) error {
	t.Reset()
	n, done, err := t.Feed(msg)
	if err != nil {
		return err
	}
	if !done || len(bytes.TrimSpace(msg[n:])) > 0 {
		return errNotObject
	}
	return members(t, msg, m)
}

// members reads the members of msg from t, which has tracked all of it.
func members(t *jsonrpc.Tracker, msg []byte, m *message) error {
	if !t.Done() || t.Kind() != jsonrpc.KindObject {
		return errNotObject
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

// member returns the raw value of the member key of the JSON object obj
// (keys compared as written), or nil. obj must be valid JSON, as a
// message the tracker accepted is.
func member(obj []byte, key string) []byte {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	i++
	for {
		i = skipWS(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return nil
		}
		ke := skipValue(obj, i)
		if ke < 0 {
			return nil
		}
		k := obj[i+1 : ke-1]
		i = skipWS(obj, ke)
		if i >= len(obj) || obj[i] != ':' {
			return nil
		}
		vs := skipWS(obj, i+1)
		ve := skipValue(obj, vs)
		if ve < 0 {
			return nil
		}
		if string(k) == key {
			return obj[vs:ve:ve]
		}
		i = skipWS(obj, ve)
		if i >= len(obj) || obj[i] != ',' {
			return nil
		}
		i++
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the offset just past the JSON value at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := skipValue(b, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\r' && b[j] != '\t' {
		j++
	}
	if j == i {
		return -1
	}
	return j
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

// isTrue reports a JSON true.
func isTrue(b []byte) bool { return string(b) == "true" }
