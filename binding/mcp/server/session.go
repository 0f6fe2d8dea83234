package server

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// Sessions (2025-03-26 … 2025-11-25).
//
// A session belongs to one worker, its owner: the worker that took the
// initialize. The owner holds the session in its own sessionTable, its
// lifecycle stream (whose FLUSH notifications arrive there), its
// inactivity timer, its GET stream and every request that names it: a
// request that arrives on another worker is relayed to the owner
// (relay.go), which the session id names (ownerOf). Nothing of a session
// is shared between workers, so none of it needs a lock.
type sessionTable struct {
	m      map[string]*session
	worker int      // the owner, as its ids encode it
	ids    idSource // nil for random ids
}

func newSessionTable(worker int, ids idSource) *sessionTable {
	return &sessionTable{m: map[string]*session{}, worker: worker, ids: ids}
}

// idSource mints session ids other than random ones (the mcp.session.id
// setting or the sessions.ids option) and remembers the owner of each,
// which such an id does not show. The engine's workers share one.
type idSource interface {
	newID(worker int) string
	// owner returns the worker that minted id, -1 for none.
	owner(id []byte) int
}

// newID returns a fresh session id that names its owner (ownerOf): 120
// random bits and the owner's index, as 32 hex digits (MCP.md §1.3:
// visible ASCII, and unguessable), or one from the table's id source.
func (t *sessionTable) newID() string {
	if t.ids != nil {
		return t.ids.newID(t.worker)
	}
	var b [16]byte
	_, _ = rand.Read(b[:15]) // crypto/rand.Read never fails (Go 1.24+)
	b[15] = byte(t.worker)
	return hex.EncodeToString(b[:])
}

// ownerOf returns the worker a session id names (newID), -1 for an id
// that names none: no session has it.
func (t *sessionTable) ownerOf(id []byte) int {
	if t.ids != nil {
		if owner := t.ids.owner(id); owner >= 0 {
			return owner
		}
	}
	if owner, ok := hexOwner(id); ok {
		return owner
	}
	return -1
}

// fixedIDs hands out the ids a mcp.session.id setting fixes, in turn and
// from the first again once all are used, for scripts that must know the
// id the server mints, as Zilla's tests fix it with a supplier method.
// Each id remembers the worker that last minted it, so that requests
// naming it reach that worker; two live sessions with one id would
// collide, so fixed ids are for scripts and single-session scenarios,
// never production.
type fixedIDs struct {
	ids    []string
	next   atomic.Uint64
	owners []atomic.Int32 // at i, 1 + the worker that last minted ids[i]
}

func newFixedIDs(ids []string) *fixedIDs {
	return &fixedIDs{ids: ids, owners: make([]atomic.Int32, len(ids))}
}

func (f *fixedIDs) newID(worker int) string {
	i := (f.next.Add(1) - 1) % uint64(len(f.ids))
	f.owners[i].Store(int32(worker) + 1)
	return f.ids[i]
}

func (f *fixedIDs) owner(id []byte) int {
	for i, s := range f.ids {
		if string(id) == s {
			return int(f.owners[i].Load()) - 1
		}
	}
	return -1
}

// sequentialIDs hands out the test-only ids session-1, session-2, … in
// the order the engine's workers create sessions, as engine-driven
// scripts expect them, and remembers each one's owner, which the id does
// not show. The engine's workers share it: a counter and write-once
// owners, atomics that no session operation touches. Past the owners it
// can remember, ids are session-N.W, W the owner.
type sequentialIDs struct {
	next   atomic.Uint64
	owners [1 << 12]atomic.Int32 // at N, 1 + the owner of session-N
}

func (q *sequentialIDs) newID(worker int) string {
	n := q.next.Add(1)
	id := "session-" + strconv.FormatUint(n, 10)
	if n < uint64(len(q.owners)) {
		q.owners[n].Store(int32(worker) + 1)
		return id
	}
	return id + "." + strconv.Itoa(worker)
}

// owner returns the worker that owns session id, -1 when there is none.
func (q *sequentialIDs) owner(id []byte) int {
	rest, ok := bytes.CutPrefix(id, []byte("session-"))
	if !ok {
		return -1
	}
	n, w, dotted := bytes.Cut(rest, []byte("."))
	seq, ok := parseUint32(n)
	switch {
	case !ok:
		return -1
	case dotted:
		owner, ok := parseUint32(w)
		if !ok || owner > 0xff {
			return -1
		}
		return int(owner)
	case uint64(seq) >= uint64(len(q.owners)):
		return -1
	}
	return int(q.owners[seq].Load()) - 1
}

// hexOwner reads the owner of a random id: its last byte.
func hexOwner(id []byte) (int, bool) {
	var b [16]byte
	if len(id) != 2*len(b) {
		return 0, false
	}
	if _, err := hex.Decode(b[:], id); err != nil {
		return 0, false
	}
	return int(b[len(b)-1]), true
}

// lookup finds a live session by id.
func (t *sessionTable) lookup(id []byte) *session {
	s := t.m[string(id)]
	if s == nil || s.closed {
		return nil
	}
	return s
}

func (t *sessionTable) add(s *session) { t.m[s.id] = s }

// remove unpublishes s; it reports whether s was still published.
func (t *sessionTable) remove(s *session) bool {
	if t.m[s.id] != s {
		return false
	}
	delete(t.m, s.id)
	return true
}

// publish adds s to the worker's table, counting it among the binding's
// live sessions (limits.sessions), the one figure the workers share.
func (h *server) publish(s *session) {
	h.table.add(s)
	h.s.live.Add(1)
}

// unpublish removes s from the worker's table; it reports whether s was
// still published.
func (h *server) unpublish(s *session) bool {
	if !h.table.remove(s) {
		return false
	}
	h.s.live.Add(-1)
	h.s.addrs.release(s)
	return true
}

// session is one MCP session, touched only by its owner's worker.
type session struct {
	id         string
	appID      []byte // the session id of request streams: the app's lifecycle reply's, or id
	version    mcp.Version
	clientCaps uint16
	serverCaps uint16

	lastActive int64 // engine clock, unix nanoseconds
	closed     bool
	// owner is the guard identity of the token its initialize carried
	// ("" for an anonymous session): the session's requests must carry
	// a token of the same identity (auth.go).
	owner string
	// addr is the client address the session counts against
	// (limits.sessionsPerAddress), empty when it counts against none.
	addr string

	lc      *lifecycle
	timerID int64
	timerFn func()
	init    postRef // the initialize waiting for the app's lifecycle reply

	get      getRef // the GET stream, if one is open
	resume   uint32 // the POST stream the GET resumed, whose later events it carries
	inflight []inflight
	streams  uint32 // POST event streams handed out; the GET stream is 0
	getSeq   uint32 // events sent on stream 0
	replay   replayRing
	clients  *clientRequests // requests the upstream sent the client, made on first use
	// early are the requests of the lifecycle that came before the
	// session's first GET stream, held for it until earlyTimer (earlyWait);
	// gotGet is set once a GET stream has opened.
	early      []*clientRequest
	earlyTimer int64
	earlyFn    func()
	gotGet     bool
	callback   []byte                  // the elicitation callback's URL, as the initialize's request makes it
	elicits    map[string]*elicitation // brokered URL elicitations pending their callback, by id; made on first use
}

// inflight is a request of the session that notifications/cancelled may
// name, by the hash of its id's JSON text.
type inflight struct {
	hash uint64
	ref  postRef
}

func (s *session) touch(now int64) { s.lastActive = now }

// addInflight records a request for cancellation.
func (s *session) addInflight(hash uint64, ref postRef) {
	s.inflight = append(s.inflight, inflight{hash, ref})
}

// removeInflight forgets a request.
func (s *session) removeInflight(p *post, gen uint32) {
	for i := range s.inflight {
		if e := &s.inflight[i]; e.ref.p == p && e.ref.gen == gen {
			last := len(s.inflight) - 1
			s.inflight[i] = s.inflight[last]
			s.inflight[last] = inflight{}
			s.inflight = s.inflight[:last]
			break
		}
	}
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
// (MCP.md §1.2): the last n, each with its stream's number and id text
// and its sequence on it. Event buffers are reused as the ring turns.
type replayRing struct {
	events []replayEvent
	next   int
	n      int
	held   int  // the capacity of the events' buffers, in the worker's replayHeld
	gone   bool // the session ended: nothing more is kept
}

type replayEvent struct {
	stream, seq uint32
	sidLen      uint8
	sid         [maxStreamID]byte
	data        []byte
}

// maxReplayEvent bounds the size of an event kept for replay; larger ones
// (a big tool result) are sent but cannot be replayed.
const maxReplayEvent = 16 << 10

// maxReplayHeld bounds the bytes the sessions of a worker keep for
// replay: each keeps up to sse.replay events of maxReplayEvent, and a
// worker may own thousands of sessions. Past it an event is sent but not
// kept, as one larger than maxReplayEvent is.
const maxReplayHeld = 64 << 20

// add keeps event seq of stream, whose id text is sid (empty for the GET
// stream), when the session keeps events (limit > 0) and the worker's
// maxReplayHeld has room for it.
func (q *replayRing) add(h *server, limit int, stream uint32, sid []byte, seq uint32, data []byte) {
	if q.gone || limit == 0 || len(data) > maxReplayEvent || len(sid) > maxStreamID {
		return
	}
	if q.events == nil {
		q.events = make([]replayEvent, limit)
	}
	e := &q.events[q.next]
	if grow := len(data) - cap(e.data); grow > 0 {
		if h.replayHeld.n+grow > maxReplayHeld {
			return
		}
		e.data = make([]byte, 0, len(data))
		h.replayHeld.add(h, metricReplay, grow)
		q.held += grow
	}
	e.stream, e.seq = stream, seq
	e.sidLen = uint8(copy(e.sid[:], sid))
	e.data = append(e.data[:0], data...)
	q.next = (q.next + 1) % len(q.events)
	q.n = min(q.n+1, len(q.events))
}

// release gives the ring's buffers back when its session ends; nothing
// more is kept for it.
func (q *replayRing) release(h *server) {
	h.replayHeld.add(h, metricReplay, -q.held)
	*q = replayRing{gone: true}
}

// find returns the number of the newest POST stream with id text sid
// that has events kept.
func (q *replayRing) find(sid []byte) (uint32, bool) {
	for i := 1; i <= q.n; i++ {
		e := &q.events[(q.next-i+len(q.events))%len(q.events)]
		if e.stream != 0 && string(e.sid[:e.sidLen]) == string(sid) {
			return e.stream, true
		}
	}
	return 0, false
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

// findStream returns the number of the event stream that Last-Event-ID's
// id text sid names: the GET stream (0) for an empty one, else the newest
// POST stream of the session whose request id makes sid, live or with
// events kept for replay. A client that reuses a request id once the
// request ended thus resumes the later request.
func (s *session) findStream(sid []byte) (uint32, bool) {
	if len(sid) == 0 {
		return 0, true
	}
	stream, found := s.replay.find(sid)
	for _, e := range s.inflight {
		p := e.ref.p
		if e.ref.live() && p.res.mode == modeSSE && p.res.stream > stream && string(p.res.streamID()) == string(sid) {
			stream, found = p.res.stream, true
		}
	}
	return stream, found
}

// Event ids (MCP.md §1.2), in Zilla's form "<stream id>:<n>": a POST's
// event stream has its request's id as its id text (appendStreamID), and
// the GET stream the empty text, so its ids are ":<n>". n counts the
// stream's events, the priming event 0.

// maxStreamID bounds a stream's id text; a request whose id makes a
// longer one gets events without ids, which cannot be resumed.
const maxStreamID = 64

// appendStreamID appends the id text of the event stream of the request
// whose JSON-RPC id has JSON text id: a number's text as it is, a
// string's content with each byte outside A-Z a-z 0-9 . _ ~ - encoded as
// %XX, so that the text holds no ':', space, CR or LF and names its
// stream within one SSE line. It reports false, having appended nothing,
// when the text would be empty (the GET stream's) or longer than
// maxStreamID, or id is not a valid JSON string or number.
func appendStreamID(dst, id []byte) ([]byte, bool) {
	if len(id) == 0 {
		return dst, false
	}
	if id[0] != '"' {
		if len(id) > maxStreamID {
			return dst, false
		}
		for _, c := range id {
			if !isDigit(c) && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
				return dst, false
			}
		}
		return append(dst, id...), true
	}
	var buf [maxStreamID]byte
	text, err := jsonrpc.UnquoteTo(buf[:0], id)
	if err != nil || len(text) == 0 {
		return dst, false
	}
	n := len(dst)
	for _, c := range text {
		if unreservedByte(c) {
			if len(dst)-n+1 > maxStreamID {
				return dst[:n], false
			}
			dst = append(dst, c)
			continue
		}
		if len(dst)-n+3 > maxStreamID {
			return dst[:n], false
		}
		dst = append(dst, '%', upperHex[c>>4], upperHex[c&0xf])
	}
	return dst, true
}

const upperHex = "0123456789ABCDEF"

// unreservedByte reports whether c stands for itself in a stream's id
// text: RFC 3986's unreserved characters.
func unreservedByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || isDigit(c) ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// appendEventID appends the SSE id of event seq of the stream whose id
// text is sid: "<sid>:<seq>".
func appendEventID(dst, sid []byte, seq uint32) []byte {
	dst = append(dst, sid...)
	dst = append(dst, ':')
	return strconv.AppendUint(dst, uint64(seq), 10)
}

// parseEventID reads an event id as appendEventID writes it: the id text
// before the first ':' and the decimal sequence after it.
func parseEventID(v []byte) (sid []byte, seq uint32, ok bool) {
	colon := bytes.IndexByte(v, ':')
	if colon < 0 || colon > maxStreamID {
		return nil, 0, false
	}
	seq, ok = parseUint32(v[colon+1:])
	if !ok {
		return nil, 0, false
	}
	return v[:colon], seq, true
}

func parseUint32(v []byte) (uint32, bool) {
	n, ok := parseDigits(v, 10)
	return uint32(n), ok && n <= 1<<32-1
}

// addrTable counts the live sessions of each client address across the
// binding's workers (limits.sessionsPerAddress). Initializes and session
// ends take its lock, requests do not. It holds an entry only for an
// address with a session, so it is bounded as the sessions are.
type addrTable struct {
	mu  sync.Mutex
	n   map[string]int
	max int
}

func newAddrTable(max int) *addrTable {
	return &addrTable{n: make(map[string]int), max: max}
}

// acquire counts a new session against addr; ok is false when addr has
// as many as it may. The key it returns names addr for release; it is
// empty, and nothing is counted, for a nil table or an empty addr (a
// request whose connection named no address).
func (t *addrTable) acquire(addr []byte) (key string, ok bool) {
	if t == nil || len(addr) == 0 {
		return "", true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.n[string(addr)]
	if n >= t.max {
		return "", false
	}
	key = string(addr)
	t.n[key] = n + 1
	return key, true
}

// release uncounts s from its address, once.
func (t *addrTable) release(s *session) {
	if t == nil || s.addr == "" {
		return
	}
	t.mu.Lock()
	if n := t.n[s.addr] - 1; n > 0 {
		t.n[s.addr] = n
	} else {
		delete(t.n, s.addr)
	}
	t.mu.Unlock()
	s.addr = ""
}
