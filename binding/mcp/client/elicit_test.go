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

// TestSetCredentials: the authorization header value a request carries,
// from the guard's credentials and options.authorization's credentials.
func TestSetCredentials(t *testing.T) {
	x := &exchange{h: &handler{s: &settings{}}}
	x.h.s.setCredentials(nil)
	x.setCredentials("c1")
	assert.Equal(t, "Bearer c1", string(x.credential), "no credentials given")
	for _, tc := range []struct{ credentials, guard, want string }{
		{"Token {credentials}", "c1", "Token c1"},
		{"{credentials}:{credentials}", "c1", "c1:c1"},
		{"Bearer gateway-key", "c1", "Bearer gateway-key"},
		{"Bearer gateway-key", "", "Bearer gateway-key"},
	} {
		s := &settings{}
		s.setCredentials(&tc.credentials)
		x := &exchange{h: &handler{s: s}}
		x.setCredentials(tc.guard)
		assert.Equal(t, tc.want, string(x.credential), "%q with %q", tc.credentials, tc.guard)
	}
}
