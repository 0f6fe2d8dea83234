package server

import (
	"hash/maphash"
	"sync"
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

// lookup returns the round that issued state (a JSON string's text), 0
// when it is unknown or expired.
func (t *roundTable) lookup(state []byte, now int64) uint8 {
	k := maphash.Bytes(t.seed, state)
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[k]
	if !ok || e.expires <= now {
		return 0
	}
	return e.round
}

// record remembers that round issued state until expires. When the table
// is full it first drops what has expired; it reports false when there is
// still no room, and the state's retry then counts as a first round.
func (t *roundTable) record(state []byte, round uint8, now, expires int64) bool {
	k := maphash.Bytes(t.seed, state)
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
	p.round = p.h.s.rounds.lookup(st, p.h.w.Now().UnixNano())
}

// countRound takes a stateless call's input_required result res: it
// records the round its requestState issues, and returns the error the
// call ends with instead when that round passes inputRequired.maxRounds
// or the result has two readings, "" otherwise.
func (p *post) countRound(res []byte) string {
	h := p.h
	round := int(p.round) + 1
	if round > h.s.maxRounds {
		h.w.Logger().Info("mcp server: input_required rounds exceeded", "binding", h.cfg.Name, "rounds", h.s.maxRounds)
		return roundsExceeded(h.s.maxRounds)
	}
	_, state, twice := inputRequiredParts(res)
	if twice {
		return "Internal error: the application's input_required result names inputRequests or requestState twice"
	}
	if isString(state) {
		now := h.w.Now()
		if !h.s.rounds.record(state, uint8(round), now.UnixNano(), now.Add(h.s.roundTimeout).UnixNano()) {
			h.w.Logger().Warn("mcp server: input_required round not tracked: the table is full", "binding", h.cfg.Name)
		}
	}
	return ""
}
