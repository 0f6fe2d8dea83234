package client

import (
	"regexp"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicehq/sluice/binding/mcp"
)

func TestNextID(t *testing.T) {
	var n atomic.Int64
	fixed := mcp.IDs{Fixed: []string{"a", "b"}}
	assert.Equal(t, []string{"a", "b", "a"}, []string{nextID(&fixed, &n, "x-"), nextID(&fixed, &n, "x-"), nextID(&fixed, &n, "x-")})

	n.Store(0)
	seq := mcp.IDs{Sequential: true}
	assert.Equal(t, "elicit-1", nextID(&seq, &n, "elicit-"))
	assert.Equal(t, "elicit-2", nextID(&seq, &n, "elicit-"))

	var random mcp.IDs
	a, b := nextID(&random, &n, ""), nextID(&random, &n, "")
	assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{8}$`), a)
	assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{8}$`), b)
}
