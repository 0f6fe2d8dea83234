package server

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/binding/mcp"
)

// Sessions (2025-03-26 … 2025-11-25).
//
// An HTTP client's requests may arrive on any worker: each connection lands
// where the kernel put it, and a client opens several. So sessions live in
// a sessionTable shared by the workers of one engine (a mutex-protected
// map, looked up once per request, never per frame), while everything a
// session does on the application side belongs to one worker, its owner:
// the worker that took the initialize. The owner holds the lifecycle
// stream, whose FLUSH notifications arrive there, and the inactivity
// timer. Another worker that needs the owner (DELETE) hands the work over
// with the owner's Worker.Dispatch; notifications travel the other way, to
// the worker holding the session's GET stream, the same way.
//
// A session's immutable facts (ids, version, capabilities) are written
// before it is published in the table and only read after. The few fields
// that every worker touches are atomics (lastActive, closed) or sit behind
// the session's own mutex (the GET stream, the in-flight requests that a
// notifications/cancelled may name, the event replay buffer); those
// critical sections are short and never send a frame.
type sessionTable struct {
	mu         sync.RWMutex
	m          map[string]*session
	sequential bool
	seq        atomic.Uint64
	refs       int    // guarded by the Binding's mutex
	release    func() // called by each worker's Detach
}

func newSessionTable(sequential bool) *sessionTable {
	return &sessionTable{m: map[string]*session{}, sequential: sequential}
}

// newID returns a fresh session id: 128 random bits in hex (MCP.md §1.3:
// visible ASCII, and unguessable), or session-N with sequential ids.
func (t *sessionTable) newID() string {
	if t.sequential {
		return "session-" + strconv.FormatUint(t.seq.Add(1), 10)
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// lookup finds a live session by id.
func (t *sessionTable) lookup(id []byte) *session {
	t.mu.RLock()
	s := t.m[string(id)]
	t.mu.RUnlock()
	if s == nil || s.closed.Load() {
		return nil
	}
	return s
}

func (t *sessionTable) add(s *session) {
	t.mu.Lock()
	t.m[s.id] = s
	t.mu.Unlock()
}

// remove unpublishes s; it reports whether s was still published.
func (t *sessionTable) remove(s *session) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m[s.id] != s {
		return false
	}
	delete(t.m, s.id)
	return true
}

// session is one MCP session.
type session struct {
	// Immutable once published.
	id         string
	appID      []byte // the session id of request streams: the app's lifecycle reply's, or id
	owner      *server
	version    mcp.Version
	clientCaps uint16
	serverCaps uint16

	lastActive atomic.Int64 // engine clock, unix nanoseconds
	closed     atomic.Bool

	// Owned by the owner worker.
	lc      *lifecycle
	timerID int64
	timerFn func()
	initReq *request // the initialize waiting for the app's lifecycle reply
	initGen uint32

	mu       sync.Mutex
	get      streamRef // the GET stream, if one is open
	resume   uint32    // the POST stream the GET resumed, whose later events it carries
	inflight []inflight
	streams  uint32 // POST event streams handed out; the GET stream is 0
	getSeq   uint32 // events sent on stream 0
	replay   replayRing
}

// streamRef names a request on the worker that holds it. A request
// struct is reused, so gen tells whether it is still the same one.
type streamRef struct {
	h   *server
	r   *request
	gen uint32
}

// inflight is a request of the session that notifications/cancelled may
// name, by the hash of its id's JSON text.
type inflight struct {
	hash uint64
	ref  streamRef
}

func (s *session) touch(now int64) { s.lastActive.Store(now) }

// addInflight records a request for cancellation.
func (s *session) addInflight(hash uint64, ref streamRef) {
	s.mu.Lock()
	s.inflight = append(s.inflight, inflight{hash, ref})
	s.mu.Unlock()
}

// removeInflight forgets a request.
func (s *session) removeInflight(r *request, gen uint32) {
	s.mu.Lock()
	for i := range s.inflight {
		if e := &s.inflight[i]; e.ref.r == r && e.ref.gen == gen {
			last := len(s.inflight) - 1
			s.inflight[i] = s.inflight[last]
			s.inflight[last] = inflight{}
			s.inflight = s.inflight[:last]
			break
		}
	}
	s.mu.Unlock()
}

// busy reports whether the session has a GET stream or requests in
// flight: a session in use does not expire.
func (s *session) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.get.r != nil || len(s.inflight) > 0
}

// fnv64 hashes a request id's JSON text.
func fnv64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// replayRing keeps a session's recent SSE events for Last-Event-ID
// (MCP.md §1.2): the last n, each with the stream and sequence its id
// encodes. Event buffers are reused as the ring turns.
type replayRing struct {
	events []replayEvent
	next   int
	n      int
}

type replayEvent struct {
	stream, seq uint32
	data        []byte
}

// maxReplayEvent bounds the size of an event kept for replay; larger ones
// (a big tool result) are sent but cannot be replayed.
const maxReplayEvent = 16 << 10

func (q *replayRing) add(limit int, stream, seq uint32, data []byte) {
	if limit == 0 || len(data) > maxReplayEvent {
		return
	}
	if q.events == nil {
		q.events = make([]replayEvent, limit)
	}
	e := &q.events[q.next]
	e.stream, e.seq = stream, seq
	e.data = append(e.data[:0], data...)
	q.next = (q.next + 1) % len(q.events)
	q.n = min(q.n+1, len(q.events))
}

// each calls fn with the kept events of stream after seq, oldest first.
func (q *replayRing) each(stream, after uint32, fn func(data []byte)) {
	if q.n == 0 {
		return
	}
	start := (q.next - q.n + len(q.events)) % len(q.events)
	for i := 0; i < q.n; i++ {
		e := &q.events[(start+i)%len(q.events)]
		if e.stream == stream && e.seq > after {
			fn(e.data)
		}
	}
}

// appendEventID appends the SSE id of event seq of stream: "<stream>-<seq>".
// Ids are unique within the session and name their stream, as 2025-11-25
// asks (MCP.md §1.2).
func appendEventID(dst []byte, stream, seq uint32) []byte {
	dst = strconv.AppendUint(dst, uint64(stream), 10)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, uint64(seq), 10)
}

// parseEventID reads an id appendEventID wrote.
func parseEventID(v []byte) (stream, seq uint32, ok bool) {
	dash := -1
	for i, c := range v {
		if c == '-' {
			dash = i
			break
		}
	}
	if dash <= 0 || dash == len(v)-1 {
		return 0, 0, false
	}
	a, ok1 := parseUint32(v[:dash])
	b, ok2 := parseUint32(v[dash+1:])
	return a, b, ok1 && ok2
}

func parseUint32(v []byte) (uint32, bool) {
	if len(v) == 0 || len(v) > 10 {
		return 0, false
	}
	var n uint64
	for _, c := range v {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return uint32(n), n <= 1<<32-1
}
