package server_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServerReadOnceGivenTwice: a header or query parameter the server
// reads one value of (a route's condition, a guard's credentials, Origin
// under a CORS policy) given twice gets 400 and the connection closes:
// the server would route or authorize on one value, and the app or an
// upstream might act on the other.
func TestServerReadOnceGivenTwice(t *testing.T) {
	e, err := startServerEngine(t, "name: test\n"+
		"guards:\n  guard0:\n    type: test\n    options:\n      credentials: secret\n"+
		"bindings:\n  net0:\n    type: http\n    kind: server\n    options:\n"+
		"      authorization:\n        guard0:\n          credentials:\n"+
		"            headers:\n              authorization: Bearer {credentials}\n"+
		"            query:\n              access_token: \"{credentials}\"\n"+
		"            cookies:\n              session: \"{credentials}\"\n"+
		"      access-control:\n        policy: cross-origin\n"+
		"    routes:\n      - exit: echo0\n        when:\n          - headers:\n              x-tenant: a\n"+
		"  echo0:\n    type: echo\n    kind: server\n")
	require.NoError(t, err)
	const (
		ok  = "HTTP/1.1 200 OK\r\n"
		bad = "HTTP/1.1 400 Bad Request\r\n"
	)
	tests := []struct{ name, head, want string }{
		{"once", "GET /?x=1 HTTP/1.1\r\nHost: h\r\nX-Tenant: a\r\nAuthorization: Bearer secret\r\n", ok},
		{"route header twice", "GET / HTTP/1.1\r\nHost: h\r\nX-Tenant: b\r\nx-tenant: a\r\nAuthorization: Bearer secret\r\n", bad},
		{"credentials twice", "GET / HTTP/1.1\r\nHost: h\r\nX-Tenant: a\r\nAuthorization: Bearer secret\r\nAuthorization: Bearer other\r\n", bad},
		{"credentials twice, same value", "GET / HTTP/1.1\r\nHost: h\r\nX-Tenant: a\r\nAuthorization: Bearer secret\r\nAuthorization: Bearer secret\r\n", bad},
		{"query credentials twice", "GET /?access_token=secret&x=1&access_token=other HTTP/1.1\r\nHost: h\r\nX-Tenant: a\r\n", bad},
		{"query credentials once", "GET /?access_token=secret&x=1 HTTP/1.1\r\nHost: h\r\nX-Tenant: a\r\n", ok},
		{"origin twice", "GET / HTTP/1.1\r\nHost: h\r\nX-Tenant: a\r\nAuthorization: Bearer secret\r\nOrigin: http://h\r\nOrigin: http://evil\r\n", bad},
		{"cookie credentials twice", "GET / HTTP/1.1\r\nHost: h\r\nX-Tenant: a\r\nCookie: session=secret; other=1; session=x\r\n", bad},
		{"cookie credentials once", "GET / HTTP/1.1\r\nHost: h\r\nX-Tenant: a\r\nCookie: session=secret; other=1\r\n", ok},
		{"an unread header twice", "GET / HTTP/1.1\r\nHost: h\r\nX-Tenant: a\r\nAuthorization: Bearer secret\r\nX-Other: 1\r\nX-Other: 2\r\n", ok},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := runWholeInput(t, e, tt.head+"Connection: close\r\n\r\n")
			assert.True(t, strings.HasPrefix(string(c.out), tt.want), "%q", c.out)
		})
	}
}
