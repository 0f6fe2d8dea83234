package jsonrpc

import "bytes"

// EventReader reads a text/event-stream, the wire of JSON-RPC messages an
// MCP server streams, incrementally, as the WHATWG "event stream
// interpretation" says: lines end with CRLF, LF or CR; data fields join
// with LF; id sets the last event id; retry the reconnection time;
// comments and other fields are skipped. An event whose type (its event
// field) is neither empty nor "message" is skipped, as the MCP SDKs'
// clients skip it: only message events carry JSON-RPC. It holds the partial line and
// the event's data between calls and allocates nothing once its buffers
// have grown. The zero value is ready.
type EventReader struct {
	// Limit bounds a line and an event's data, in bytes; zero means no
	// bound.
	Limit int

	line    []byte // the line read so far
	data    []byte // the event's data, each line followed by LF
	hasData bool
	event   []byte // the event's type, from its event field
	lastID  []byte // the last event id, kept across events
	retry   int64  // the last retry field in ms, or 0
	skipLF  bool   // the previous line ended with CR: a LF next is its end
}

// Reset readies r for a new stream, keeping its Limit and buffers.
func (r *EventReader) Reset() {
	r.line, r.data, r.event, r.lastID = r.line[:0], r.data[:0], r.event[:0], r.lastID[:0]
	r.hasData, r.retry, r.skipLF = false, 0, false
}

// LastID returns the last event id the stream set, for a Last-Event-ID
// header; valid until the next call to Next.
func (r *EventReader) LastID() []byte { return r.lastID }

// Retry returns the reconnection time of the last retry field, in
// milliseconds, or 0.
func (r *EventReader) Retry() int64 { return r.retry }

// Next consumes b up to the end of the next event and returns the bytes
// consumed and the event's data (without its final LF), valid until the
// next call; data is nil when b ended before an event did. An event
// without data (an id and an empty data line, as a server primes a
// stream) is returned with empty, non-nil data. It returns
// [ErrEventTooLarge] for a line or event over r.Limit.
func (r *EventReader) Next(b []byte) (int, []byte, error) {
	i := 0
	for i < len(b) {
		c := b[i]
		if r.skipLF {
			r.skipLF = false
			if c == '\n' {
				i++
				continue
			}
		}
		j := bytes.IndexAny(b[i:], "\r\n")
		if j < 0 {
			if r.over(len(r.line) + len(b) - i) {
				return i, nil, ErrEventTooLarge
			}
			r.line = append(r.line, b[i:]...)
			return len(b), nil, nil
		}
		if r.over(len(r.line) + j) {
			return i, nil, ErrEventTooLarge
		}
		r.line = append(r.line, b[i:i+j]...)
		r.skipLF = b[i+j] == '\r'
		i += j + 1
		if data, ok := r.field(); ok {
			return i, data, nil
		} else if r.over(len(r.data)) {
			return i, nil, ErrEventTooLarge
		}
	}
	return i, nil, nil
}

func (r *EventReader) over(n int) bool { return r.Limit > 0 && n > r.Limit }

// field processes the line just read, and reports a dispatched event.
func (r *EventReader) field() ([]byte, bool) {
	line := r.line
	r.line = r.line[:0]
	if len(line) == 0 {
		typ := r.event
		r.event = r.event[:0]
		if !r.hasData {
			return nil, false
		}
		data := r.data
		if n := len(data); n > 0 && data[n-1] == '\n' {
			data = data[:n-1]
		}
		r.data, r.hasData = r.data[:0], false
		if len(typ) > 0 && string(typ) != "message" {
			return nil, false
		}
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
		r.data = append(append(r.data, value...), '\n')
		r.hasData = true
	case "event":
		r.event = append(r.event[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.lastID = append(r.lastID[:0], value...)
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
			r.retry = n
		}
	}
	return nil, false
}
