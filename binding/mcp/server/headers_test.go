package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
