//go:build linux

package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPacer(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := pacer{interval: time.Millisecond / 2, next: t0}
	// Two due per millisecond, and no more.
	assert.True(t, p.due(t0))
	assert.False(t, p.due(t0))
	assert.True(t, p.due(t0.Add(500*time.Microsecond)))
	assert.False(t, p.due(t0.Add(900*time.Microsecond)))
	// Behind by 50 ms: it catches up, one request at a time.
	late := t0.Add(51 * time.Millisecond)
	n := 0
	for p.due(late) {
		n++
	}
	assert.Equal(t, 101, n, "due at 1.0, 1.5, … 51.0 ms: 50 ms of backlog at 2 per ms, and the one due now")
	// Behind by more than 100 ms: the backlog is dropped.
	later := late.Add(time.Second)
	n = 0
	for p.due(later) {
		n++
	}
	assert.Equal(t, 1, n)

	// The wait: to the next due request, rounded up to whole ms, and at
	// most the loop's own timeout; nothing ready, the loop's own.
	p = pacer{interval: time.Millisecond, next: t0.Add(2300 * time.Microsecond)}
	assert.Equal(t, 100, p.timeout(t0, 100), "no connection waits")
	p.ready = []*evConn{{}}
	assert.Equal(t, 3, p.timeout(t0, 100))
	assert.Equal(t, 2, p.timeout(t0, 2))
	assert.Equal(t, 0, p.timeout(t0.Add(3*time.Millisecond), 100))
}
