package client

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIdlePoolOrder: the pool hands out the connection idle longest
// first, takes a closing one out wherever it waits, and in a steady
// cycle of returns and takes reuses its room rather than growing.
func TestIdlePoolOrder(t *testing.T) {
	var p idlePool
	cs := make([]*clientConn, 5)
	for i := range cs {
		cs[i] = &clientConn{authority: "a"}
		p.push(cs[i])
	}
	require.Equal(t, 5, p.idle())
	assert.Same(t, cs[0], p.pop())
	assert.Same(t, cs[1], p.pop())
	p.remove(cs[3])
	p.remove(cs[0]) // not queued: nothing happens
	assert.Equal(t, 2, p.idle())
	p.push(cs[0])
	assert.Same(t, cs[2], p.pop())
	assert.Same(t, cs[4], p.pop())
	assert.Same(t, cs[0], p.pop())
	assert.Nil(t, p.pop())
	assert.Equal(t, 0, p.idle())

	// Three connections taken and returned in turn, many times.
	for _, c := range cs[:3] {
		p.push(c)
	}
	capacity := cap(p.conns)
	for i := range 1000 {
		c := p.pop()
		require.Same(t, cs[i%3], c, "round %d: the one idle longest", i)
		p.push(c)
	}
	assert.LessOrEqual(t, cap(p.conns), max(capacity, 8), "the queue reuses its room")
	// The 1,000th round returned cs[0]: the queue is cs[1], cs[2], cs[0].
	p.remove(cs[1])
	for _, want := range []*clientConn{cs[2], cs[0]} {
		assert.Same(t, want, p.pop())
	}
}
