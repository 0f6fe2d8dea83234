package server

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine/telemetry"
)

// TestStreamID checks the id text a request's id gives its event stream:
// a number as it is, a string's content percent-encoded, and none when
// the text would be empty or too long.
func TestStreamID(t *testing.T) {
	for _, tt := range []struct{ id, want string }{
		{`2`, "2"},
		{`-17`, "-17"},
		{`"abc"`, "abc"},
		{`"a-b.c_d~e"`, "a-b.c_d~e"},
		{`"a:b"`, "a%3Ab"},
		{`"two words"`, "two%20words"},
		{`"line\nbreak\r"`, "line%0Abreak%0D"},
		{`"%"`, "%25"},
		{`"écho"`, "%C3%A9cho"},
		{`"\u00e9"`, "%C3%A9"},
		{`"\"q\""`, "%22q%22"},
		{`"` + strings.Repeat("x", maxStreamID) + `"`, strings.Repeat("x", maxStreamID)},
		{`"` + strings.Repeat("x", maxStreamID-3) + `/"`, strings.Repeat("x", maxStreamID-3) + "%2F"},
	} {
		got, ok := appendStreamID([]byte("keep"), []byte(tt.id))
		require.True(t, ok, tt.id)
		assert.Equal(t, "keep"+tt.want, string(got), tt.id)
	}
	for _, id := range []string{
		``,
		`""`,
		`"` + strings.Repeat("x", maxStreamID+1) + `"`,
		`"` + strings.Repeat("x", maxStreamID-2) + `/"`,
		`"` + strings.Repeat("é", maxStreamID/6+1) + `"`,
		`1` + strings.Repeat("0", maxStreamID),
		`"unterminated`,
		`"bad\q"`,
		`null`,
		`{}`,
	} {
		got, ok := appendStreamID([]byte("keep"), []byte(id))
		assert.False(t, ok, id)
		assert.Equal(t, "keep", string(got), "nothing appended for %s", id)
	}
}

// TestStreamIDOneLine checks that no id text can break an SSE id line or
// be split at its ':' whatever bytes the request's id string holds.
func TestStreamIDOneLine(t *testing.T) {
	id := `"a b:c/%\u0000\u0001\n\u2028😀"`
	sid, ok := appendStreamID(nil, []byte(id))
	require.True(t, ok, id)
	assert.NotContains(t, string(sid), ":")
	assert.False(t, bytes.ContainsAny(sid, " \r\n\x00"), "%q", sid)
	for _, c := range sid {
		assert.True(t, unreservedByte(c) || c == '%', "%q in %q", c, sid)
	}
}

// TestEventID checks that an event id reads back as it was written, and
// that ids of other forms do not read.
func TestEventID(t *testing.T) {
	for _, tt := range []struct {
		sid  string
		seq  uint32
		want string
	}{
		{"2", 0, "2:0"},
		{"a%3Ab", 42, "a%3Ab:42"},
		{"", 7, ":7"},
		{"x", 1<<32 - 1, "x:4294967295"},
	} {
		b := appendEventID(nil, []byte(tt.sid), tt.seq)
		assert.Equal(t, tt.want, string(b))
		sid, seq, ok := parseEventID(b)
		require.True(t, ok, tt.want)
		assert.Equal(t, tt.sid, string(sid))
		assert.Equal(t, tt.seq, seq)
	}
	for _, s := range []string{"", "2", "2:", "2:x", "2:-1", "2:1:1", "1-2", "event-99", "2:4294967296",
		strings.Repeat("x", maxStreamID+1) + ":1"} {
		_, _, ok := parseEventID([]byte(s))
		assert.False(t, ok, s)
	}
}

// TestReplayRingFind checks that a stream's id text finds its newest
// stream among the kept events, and only POST streams.
func TestReplayRingFind(t *testing.T) {
	var q replayRing
	h := &server{replayHeld: heldBytes{gauge: new(telemetry.Gauge)}}
	q.add(h, 4, 1, []byte("7"), 1, []byte("a"))
	q.add(h, 4, 0, nil, 1, []byte("g"))
	q.add(h, 4, 2, []byte("8"), 1, []byte("b"))
	q.add(h, 4, 3, []byte("7"), 1, []byte("c"))
	stream, ok := q.find([]byte("7"))
	require.True(t, ok)
	assert.Equal(t, uint32(3), stream, "the newest stream with that id")
	stream, ok = q.find([]byte("8"))
	require.True(t, ok)
	assert.Equal(t, uint32(2), stream)
	_, ok = q.find([]byte("9"))
	assert.False(t, ok)
	_, ok = q.find(nil)
	assert.False(t, ok, "the GET stream is not found by id text")
	q.add(h, 4, 4, []byte("9"), 1, []byte("d"))
	q.add(h, 4, 4, []byte("9"), 2, []byte("e"))
	q.add(h, 4, 4, []byte("9"), 3, []byte("f"))
	_, ok = q.find([]byte("8"))
	assert.False(t, ok, "stream 2's events left the ring")
	var got []string
	q.each(4, 1, func(d []byte) { got = append(got, string(d)) })
	assert.Equal(t, []string{"e", "f"}, got)
}

// FuzzEventID checks that parseEventID never fails on any input and that
// what it reads writes back to the same id.
func FuzzEventID(f *testing.F) {
	for _, s := range []string{"2:1", ":0", "a%3Ab:42", "event-99", "1-2", "2:", ":", "x:4294967296"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		sid, seq, ok := parseEventID(v)
		if !ok {
			return
		}
		if len(sid) > maxStreamID || bytes.IndexByte(sid, ':') >= 0 {
			t.Fatalf("%q read as id text %q", v, sid)
		}
		back := appendEventID(nil, sid, seq)
		sid2, seq2, ok := parseEventID(back)
		if !ok || !bytes.Equal(sid, sid2) || seq != seq2 {
			t.Fatalf("%q wrote back as %q, which reads %q %d %v", v, back, sid2, seq2, ok)
		}
	})
}

// TestFindStream checks which stream a Last-Event-ID's id text names: the
// GET stream for none, a live POST stream whose events were not kept, and
// the newest of two streams of one request id.
func TestFindStream(t *testing.T) {
	var s session
	stream, ok := s.findStream(nil)
	require.True(t, ok)
	assert.Equal(t, uint32(0), stream, "the GET stream")
	_, ok = s.findStream([]byte("7"))
	assert.False(t, ok, "no stream yet")

	live := &post{}
	live.res.mode, live.res.stream, live.res.id = modeSSE, 2, []byte(`"a b"`)
	require.NotNil(t, live.res.makeStreamID())
	s.addInflight(fnv64(live.res.id), live.ref())
	stream, ok = s.findStream([]byte("a%20b"))
	require.True(t, ok, "a live stream with only its priming event sent")
	assert.Equal(t, uint32(2), stream)

	h := &server{replayHeld: heldBytes{gauge: new(telemetry.Gauge)}}
	s.replay.add(h, 8, 1, []byte("a%20b"), 1, []byte("old"))
	s.replay.add(h, 8, 3, []byte("a%20b"), 1, []byte("new"))
	assert.Equal(t, 6, h.replayHeld.n, "the events' bytes, held")
	stream, ok = s.findStream([]byte("a%20b"))
	require.True(t, ok)
	assert.Equal(t, uint32(3), stream, "the newest stream with that id")

	live.gen++
	s.replay.release(h)
	assert.Zero(t, h.replayHeld.n, "given back")
	_, ok = s.findStream([]byte("a%20b"))
	assert.False(t, ok, "a released POST names no stream")
	s.replay.add(h, 8, 4, []byte("c"), 1, []byte("late"))
	assert.Zero(t, h.replayHeld.n, "an ended session keeps nothing more")
}
