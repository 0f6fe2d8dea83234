package server

import "github.com/sluicehq/sluice/binding/mcp/jsonrpc"

// resultTail follows a 2026-07-28 result that streams through (larger
// than its slot) to its closing brace. What splice2026 adds to a result
// it holds goes in there instead: which members the result lacks is known
// only once all of them have passed, and members added in front of ones
// the result has would name them twice. A _meta the result has already
// passed, so the serverInfo is not added to it.
type resultTail struct {
	t         jsonrpc.Tracker
	cacheable bool
	fed       int64 // the bytes fed so far
	last      byte  // the last byte fed that is not whitespace
	typ       [16]byte
	typLen    int   // len(typ)+1: longer than typ holds
	typStart  int64 // where the resultType value read into typ starts, 0 for none
	done      bool  // the closing brace has passed, or the result is not JSON
	state     stateSum
}

func (rt *resultTail) reset(cacheable bool, rounds *roundTable) {
	rt.t.Reset()
	rt.state.reset(rounds)
	rt.cacheable = cacheable
	rt.fed, rt.last, rt.typLen, rt.typStart, rt.done = 0, 0, 0, 0, false
}

// feed follows the next part of the result and returns the offset in it
// of the result's closing brace, or -1 when the brace is not in it.
func (rt *resultTail) feed(b []byte) int {
	if rt.done {
		return -1
	}
	n, done, err := rt.t.Feed(b)
	if err != nil {
		// Not JSON: there is no end to find, and nothing is added.
		rt.done = true
		return -1
	}
	rt.noteType(b[:n])
	rt.state.note(&rt.t, rt.fed, b[:n])
	at := -1
	seen := b[:n]
	if done {
		rt.done, at = true, n-1
		seen = b[:at]
	}
	for i := len(seen) - 1; i >= 0; i-- {
		if c := seen[i]; c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			rt.last = c
			break
		}
	}
	rt.fed += int64(n)
	return at
}

// resultType returns the text of the result's resultType, nil when it
// has none or one longer than any resultType.
func (rt *resultTail) resultType() []byte {
	if rt.typLen > len(rt.typ) || !rt.t.Member(jsonrpc.MemberResultType).Complete() {
		return nil
	}
	return rt.typ[:rt.typLen]
}

// noteType keeps the text of the result's resultType value as it passes
// in seen, the bytes fed last; a later resultType replaces an earlier one,
// as the tracker's does.
func (rt *resultTail) noteType(seen []byte) {
	r := rt.t.Member(jsonrpc.MemberResultType)
	if r.Start == 0 {
		return
	}
	if r.Start != rt.typStart {
		rt.typStart, rt.typLen = r.Start, 0
	}
	part := memberPart(r, rt.fed, seen)
	if len(part) == 0 || rt.typLen > len(rt.typ) {
		return
	}
	if rt.typLen+len(part) > len(rt.typ) {
		rt.typLen = len(rt.typ) + 1
		return
	}
	rt.typLen += copy(rt.typ[rt.typLen:], part)
}

// appendTail appends what goes in before the closing brace of the result
// rt followed: the members it lacks, after a comma when it has any.
func (h *server) appendTail(dst []byte, rt *resultTail) []byte {
	r := rt.t.Member(jsonrpc.MemberResultType)
	var typ []byte
	if rt.typLen <= len(rt.typ) {
		typ = rt.typ[:rt.typLen]
	}
	keys := rt.t.Keys()
	at := len(dst)
	dst = append(dst, ',')
	dst = h.appendSpliced(dst, r.Complete(), typ, keys.Has(jsonrpc.KeyMeta), keys.Has(jsonrpc.KeyTTLMs), keys.Has(jsonrpc.KeyCacheScope), rt.cacheable)
	switch {
	case len(dst) == at+1:
		return dst[:at]
	case rt.last == '{':
		return append(dst[:at], dst[at+1:]...)
	}
	return dst
}
