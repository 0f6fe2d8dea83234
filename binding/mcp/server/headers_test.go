package server

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpb "github.com/sluicehq/sluice/binding/http"
)

func TestScanAccept(t *testing.T) {
	for _, c := range []struct {
		v              string
		json, sse, any bool
	}{
		{"application/json, text/event-stream", true, true, false},
		{"application/json, text/event-stream, */*", true, true, true},
		{"application/json, text/event-streams", true, false, false},
		{"application/json,  text/event-stream", true, true, false},
		{"text/event-stream,application/json", true, true, false},
		{"Application/JSON", true, false, false},
		{"TEXT/EVENT-STREAM;q=0.9", false, true, false},
		{" application/json ; q=1 ,\ttext/event-stream\t", true, true, false},
		{"application/jsonl", false, false, false},
		{"application/json-seq, text/event-streams", false, false, false},
		{"text/event-strea", false, false, false},
		{"application/xml, */*", false, false, true},
		{"*/*;q=0.1", false, false, true},
		{"*/**", false, false, false},
		{",,application/json,,", true, false, false},
		{"", false, false, false},
	} {
		json, sse, any := scanAccept([]byte(c.v))
		assert.Equal(t, [3]bool{c.json, c.sse, c.any}, [3]bool{json, sse, any}, "Accept: %q", c.v)
	}
}

// TestHeaderWriter pins the response head's hand-written HttpBeginEx to
// the generated builder's bytes, reads it back with headerIter, and
// checks that a head that does not fit fails.
func TestHeaderWriter(t *testing.T) {
	type header struct{ name, value string }
	for _, tt := range []struct {
		name    string
		headers []header
	}{
		{"none", nil},
		{"json", []header{{":status", "200"}, {"content-type", "application/json"}, {"content-length", "84"}}},
		{"session", []header{{":status", "200"}, {"content-type", "text/event-stream"}, {"mcp-session-id", "session-1"}}},
		{"empty value", []header{{":status", "405"}, {"allow", ""}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const typeID = 7
			want := make([]byte, 512)
			var b httpb.HttpBeginExBuilder
			hs := b.Wrap(want, 3, len(want)).TypeID(typeID).Headers()
			for _, h := range tt.headers {
				hs.Item().Name(h.name).Value(h.value)
			}
			wantLimit, err := b.BuildLimit()
			require.NoError(t, err)

			got := make([]byte, 512)
			w := newHeaderWriter(got, 3, len(got), true)
			for i, h := range tt.headers {
				if i%2 == 0 {
					w.add(h.name, h.value)
				} else {
					w.addBytes(h.name, []byte(h.value))
				}
			}
			limit, err := w.finish(typeID)
			require.NoError(t, err)
			assert.Equal(t, wantLimit, limit)
			assert.Equal(t, want[:wantLimit], got[:limit])

			it, ok := httpHeaders(got[3:limit], typeID)
			require.True(t, ok)
			var read []header
			for name, v, ok := it.next(); ok; name, v, ok = it.next() {
				read = append(read, header{string(name), string(v)})
			}
			assert.Equal(t, tt.headers, read)
		})
	}

	buf := make([]byte, 40)
	w := newHeaderWriter(buf, 0, len(buf), true)
	w.add(":status", "200")
	w.add("content-type", "application/json")
	_, err := w.finish(7)
	assert.ErrorIs(t, err, errHeadTooLarge, "a head past the frame")
	w = newHeaderWriter(buf, 0, len(buf), true)
	w.add(strings.Repeat("n", 128), "")
	_, err = w.finish(7)
	assert.ErrorIs(t, err, errHeadTooLarge, "a name past its length prefix")
	w = newHeaderWriter(buf, 0, len(buf), false)
	w.add(":status", "200")
	_, err = w.finish(7)
	assert.ErrorIs(t, err, errHeadTooLarge, "a frame builder that failed before its extension")
}
