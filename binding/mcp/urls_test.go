package mcp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicehq/sluice/binding/mcp"
)

func TestQueryParam(t *testing.T) {
	for _, tt := range []struct {
		u, want string
		ok      bool
	}{
		{"https://a/x?state=1&b=2", "1", true},
		{"https://a/x?xstate=1&state=2", "2", true},
		{"https://a/x?b=2&state=", "", true},
		{"https://a/x?state", "", false},
		{"https://a/x#?state=1", "", false},
		{"https://a/x?b=1#state=2", "", false},
		{"https://a/x", "", false},
	} {
		got, ok := mcp.QueryParam([]byte(tt.u), "state")
		assert.Equal(t, tt.ok, ok, tt.u)
		assert.Equal(t, tt.want, string(got), tt.u)
	}
}

// TestQueryParamOnce: a client's URL that names the parameter twice, with
// a value or not, has no one reading of it.
func TestQueryParamOnce(t *testing.T) {
	for _, tt := range []struct {
		u, want string
		ok      bool
	}{
		{"https://a/x?state=1&b=2", "1", true},
		{"https://a/x?xstate=1&state=2&statex=3", "2", true},
		{"https://a/x?state=1&state=2", "", false},
		{"https://a/x?state=1&state", "", false},
		{"https://a/x?state&state=1", "", false},
		{"https://a/x?state=1#&state=2", "1", true},
		{"https://a/x?state", "", false},
	} {
		got, ok := mcp.QueryParamOnce([]byte(tt.u), "state")
		assert.Equal(t, tt.ok, ok, tt.u)
		assert.Equal(t, tt.want, string(got), tt.u)
	}
}
