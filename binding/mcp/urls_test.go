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
