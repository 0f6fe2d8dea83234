package server

import (
	"hash/maphash"
	"sync"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// The round cap between a 2026-07-28 client and a 2026-07-28 application
// (issue 28, item 1). input_required results, inputResponses and
// requestState pass through unchanged; what the server adds is a count of
// the rounds of one logical call, which no message carries: each
// input_required result's requestState is remembered with its round, and
// a retry that brings that requestState back continues from it. Past
// inputRequired.maxRounds the result is replaced by an error. A result
// without requestState starts no chain (its retry is a new call), and a
// requestState the table does not know (expired, or made for another
// instance) counts as a first round.

// maxRoundStates bounds the requestStates a binding remembers.
const maxRoundStates = 1 << 16

// roundTable maps a requestState to the round that issued it. Retries
// arrive on any worker, so the workers share it. Keys are a seeded hash of
// the state's JSON text, so that a client cannot aim its state at
// another's entry.
type roundTable struct {
	seed maphash.Seed

	mu      sync.Mutex
	entries map[uint64]roundEntry
}

type roundEntry struct {
	round   uint8
	expires int64 // engine clock, unix nanoseconds
}

func newRoundTable() *roundTable {
	return &roundTable{seed: maphash.MakeSeed(), entries: make(map[uint64]roundEntry)}
}

// hasher returns a hash that sums a state written to it in parts as key
// sums it whole.
func (t *roundTable) hasher() maphash.Hash {
	var h maphash.Hash
	h.SetSeed(t.seed)
	return h
}

// key returns the table's key for state, a JSON string's text.
func (t *roundTable) key(state []byte) uint64 { return maphash.Bytes(t.seed, state) }

// lookup returns the round that issued the state whose key is k, 0 when
// it is unknown or expired.
func (t *roundTable) lookup(k uint64, now int64) uint8 {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[k]
	if !ok || e.expires <= now {
		return 0
	}
	return e.round
}

// record remembers that round issued the state whose key is k until
// expires. When the table is full it first drops what has expired; it
// reports false when there is still no room, and the state's retry then
// counts as a first round.
func (t *roundTable) record(k uint64, round uint8, now, expires int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.entries[k]; !ok && len(t.entries) >= maxRoundStates {
		for key, e := range t.entries {
			if e.expires <= now {
				delete(t.entries, key)
			}
		}
		if len(t.entries) >= maxRoundStates {
			return false
		}
	}
	t.entries[k] = roundEntry{round: round, expires: expires}
	return true
}

// readRound notes the round a stateless call continues: the one that
// issued the requestState its params bring back, 0 for none.
func (p *post) readRound(params []byte) {
	p.round = 0
	st, ok := field(params, "requestState")
	if !ok || !isString(st) {
		return
	}
	p.round = p.h.s.rounds.lookup(p.h.s.rounds.key(st), p.h.w.Now().UnixNano())
}

// nextRound returns the round of the call's input_required result; ok is
// false, and it is logged, when that round passes inputRequired.maxRounds.
func (p *post) nextRound() (round int, ok bool) {
	h := p.h
	round = int(p.round) + 1
	if round > h.s.maxRounds {
		h.w.Logger().Info("mcp server: input_required rounds exceeded", "binding", h.cfg.Name, "rounds", h.s.maxRounds)
		return round, false
	}
	return round, true
}

// recordRound remembers, for roundTimeout, that round issued the state
// whose key is k.
func (p *post) recordRound(k uint64, round int) {
	h := p.h
	now := h.w.Now()
	if !h.s.rounds.record(k, uint8(round), now.UnixNano(), now.Add(h.s.roundTimeout).UnixNano()) {
		h.w.Logger().Warn("mcp server: input_required round not tracked: the table is full", "binding", h.cfg.Name)
	}
}

// countRound takes a stateless call's input_required result res: it
// records the round its requestState issues, and returns the error the
// call ends with instead when that round passes inputRequired.maxRounds
// or the result has two readings, "" otherwise.
func (p *post) countRound(res []byte) string {
	round, ok := p.nextRound()
	if !ok {
		return roundsExceeded(p.h.s.maxRounds)
	}
	_, state, twice := inputRequiredParts(res)
	if twice {
		return "Internal error: the application's input_required result names inputRequests or requestState twice"
	}
	if isString(state) {
		p.recordRound(p.h.s.rounds.key(state), round)
	}
	return ""
}

// memberPart returns the part of seen, the bytes a Tracker consumed last
// (starting at offset fed of its value), that lies in the member value r.
func memberPart(r jsonrpc.Range, fed int64, seen []byte) []byte {
	from, to := max(r.Start, fed), fed+int64(len(seen))
	if r.Complete() {
		to = min(to, r.End)
	}
	if r.Start == 0 || to <= from {
		return nil
	}
	return seen[from-fed : to-fed]
}

// stateSum follows the requestState of an object that a Tracker scans in
// parts (a retry's params or an input_required result too big to hold),
// summing its text as it passes as the round table keys a state held
// whole. A later requestState replaces an earlier one, as the tracker's
// range does.
type stateSum struct {
	h     maphash.Hash
	start int64 // where the value summed starts, 0 for none yet
	str   bool  // the value is a string
}

func (s *stateSum) reset(t *roundTable) {
	s.h = t.hasher()
	s.start, s.str = 0, false
}

// note takes seen, the bytes t consumed last, which start at offset fed.
func (s *stateSum) note(t *jsonrpc.Tracker, fed int64, seen []byte) {
	r := t.Member(jsonrpc.MemberRequestState)
	if r.Start == 0 {
		return
	}
	if r.Start != s.start {
		s.h.Reset()
		s.start = r.Start
		s.str = r.Start >= fed && r.Start < fed+int64(len(seen)) && seen[r.Start-fed] == '"'
	}
	_, _ = s.h.Write(memberPart(r, fed, seen))
}

// sum returns the state's key in the round table; ok is false unless t
// has passed a whole requestState that is a string.
func (s *stateSum) sum(t *jsonrpc.Tracker) (k uint64, ok bool) {
	if !s.str || !t.Member(jsonrpc.MemberRequestState).Complete() {
		return 0, false
	}
	return s.h.Sum64(), true
}

// startRoundScan follows the params of a stateless call whose body
// streams, from head, the part of them in its first slot, for the
// requestState that names the round it continues; the rest comes to
// scanRound as it arrives, before the params are rewritten (fixParams).
func (p *post) startRoundScan(head []byte) bool {
	p.round = 0
	if p.rtrk == nil {
		p.rtrk = jsonrpc.NewTracker(jsonrpc.Options{MaxDepth: maxJSONDepth})
	}
	p.rtrk.Reset()
	p.st.rsum.reset(p.h.s.rounds)
	p.st.rbase, p.st.rfed = p.st.sent, 0
	p.st.flags |= roundScan | roundScanned
	return p.scanRound(head)
}

// stateSpan returns the body offsets of the requestState string that the
// round scan found in a streaming body's params: where it starts (0 for
// none yet) and ends (0 while it goes on).
func (p *post) stateSpan() (from, to int64) {
	if p.st.flags&roundScanned == 0 {
		return 0, 0
	}
	r := p.rtrk.Member(jsonrpc.MemberRequestState)
	if r.Start == 0 || !p.st.rsum.str {
		return 0, 0
	}
	from = p.st.rbase + r.Start
	if r.Complete() {
		to = p.st.rbase + r.End
	}
	return from, to
}

// scanRound takes the next bytes of a streaming body's params. Once the
// params end it looks up the round their requestState names; it reports
// false when it refused the request: one that names requestState twice
// has two readings, as in a body held whole.
func (p *post) scanRound(b []byte) bool {
	if p.st.flags&roundScan == 0 {
		return true
	}
	t := p.rtrk
	n, done, err := t.Feed(b)
	if err != nil {
		// The body's own tracker answers for its syntax.
		p.st.flags &^= roundScan
		return true
	}
	p.st.rsum.note(t, p.st.rfed, b[:n])
	p.st.rfed += int64(n)
	if !done {
		return true
	}
	p.st.flags &^= roundScan
	if t.Duplicates().Has(jsonrpc.MemberRequestState) {
		p.streamFailed(400, codeInvalidParams, `Invalid params: duplicate member "requestState"`)
		return false
	}
	if k, ok := p.st.rsum.sum(t); ok {
		p.round = p.h.s.rounds.lookup(k, p.h.w.Now().UnixNano())
	}
	return true
}
