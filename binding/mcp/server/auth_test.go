package server_test

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// guardedStack is the rest of a stack's config after the server's
// options: its exit, a toolkit, and the test guard test0 (token
// "test-token") with more options as YAML lines.
func guardedStack(guardOptions string) string {
	return "  app0:\n    type: toolkit\n    kind: server\n" +
		"guards:\n  test0:\n    type: test\n    options:\n      credentials: test-token\n" + guardOptions
}

// guardedOptions is the server's options with test0 and protected
// resource metadata, and the rest of the config.
var guardedOptions = `    options:
      authorization:
        test0:
          credentials: "Bearer {credentials}"
      protectedResource:
        resource: https://gateway.example/mcp
        authorizationServers: [https://auth.example]
        scopes: [mcp:tools]
` + guardedStack("")

const guardedInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestProtectedResourceMetadata: the server serves its RFC 9728 metadata
// at the well-known path followed by the resource's path, without a
// token although it has a guard, and its Bearer challenges name it as
// resource_metadata, where an MCP client starts its OAuth flow. A valid
// token is served, an anonymous request too (a guarded route decides).
func TestProtectedResourceMetadata(t *testing.T) {
	base, e := enginetest.StartMCP(t, "stack.yaml", "app0", guardedOptions)
	origin := strings.TrimSuffix(base, "/mcp")
	c := &http.Client{}
	t.Cleanup(c.CloseIdleConnections)

	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := c.Get(origin + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, 200, resp.StatusCode, path)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		assert.JSONEq(t, `{"resource":"https://gateway.example/mcp","authorization_servers":["https://auth.example"],"scopes_supported":["mcp:tools"],"bearer_methods_supported":["header"]}`, string(body), path)
	}

	post := func(auth string) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodPost, base, strings.NewReader(guardedInitialize))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := c.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(body)
	}
	resp, body := post("Bearer forged")
	assert.Equal(t, 401, resp.StatusCode, body)
	assert.Equal(t, `Bearer error="invalid_token", resource_metadata="https://gateway.example/.well-known/oauth-protected-resource/mcp"`, resp.Header.Get("WWW-Authenticate"))
	assert.JSONEq(t, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Unauthorized: invalid_token"},"id":null}`, body)

	resp, body = post("Token test-token")
	assert.Equal(t, 400, resp.StatusCode, body)
	assert.Equal(t, `Bearer error="invalid_request", resource_metadata="https://gateway.example/.well-known/oauth-protected-resource/mcp"`, resp.Header.Get("WWW-Authenticate"))

	resp, body = post("Bearer test-token")
	assert.Equal(t, 200, resp.StatusCode, body)
	assert.NotEmpty(t, resp.Header.Get("Mcp-Session-Id"))
	resp, body = post("bearer test-token")
	assert.Equal(t, 200, resp.StatusCode, "the scheme is case-insensitive: %s", body)
	enginetest.Settle(t, e)
	assert.EqualValues(t, 2, enginetest.Metric(e, "mcp0", "mcp.server.unauthorized"), "each refusal is counted")

	resp, body = post("")
	assert.Equal(t, 200, resp.StatusCode, body)

	req, err := http.NewRequest(http.MethodPost, base, strings.NewReader(guardedInitialize))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Add("Authorization", "Bearer test-token")
	req.Header.Add("Authorization", "Bearer other")
	resp, err = c.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 400, resp.StatusCode, "an Authorization header given twice has two readings: %s", b)
}

// TestProtectedResourceConfig refuses metadata a client could not use.
func TestProtectedResourceConfig(t *testing.T) {
	for name, tc := range map[string]struct{ resource, servers, want string }{
		"relative resource": {"/mcp", "[https://auth.example]", `mcp mcp0: protectedResource: resource "/mcp": want an absolute http or https URL`},
		"fragment":          {"https://gateway.example/mcp#x", "[https://auth.example]", `resource "https://gateway.example/mcp#x": want no fragment or user info`},
		"query":             {"https://gateway.example/mcp?a=b", "[https://auth.example]", `want no query (RFC 9728 §2)`},
		"bad server":        {"https://gateway.example/mcp", "[auth.example]", `authorizationServers[0] "auth.example": want an absolute http or https URL`},
		"no servers":        {"https://gateway.example/mcp", "[]", `authorizationServers`},
	} {
		t.Run(name, func(t *testing.T) {
			src := "name: test\nbindings:\n  mcp0:\n    type: mcp\n    kind: server\n    exit: app0\n    options:\n      protectedResource:\n" +
				"        resource: \"" + tc.resource + "\"\n        authorizationServers: " + tc.servers + "\n" +
				"  app0:\n    type: toolkit\n    kind: server\n"
			err := enginetest.Check(t, "stack.yaml", src, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestGetStreamEndsWithToken: a GET stream opened with a token that
// expires (the test guard's lifetime, on the engine's manual clock) ends
// at the first keep-alive from its expiry, not before; the client opens
// it again with a fresh token.
func TestGetStreamEndsWithToken(t *testing.T) {
	clock := enginetest.NewClock()
	base, e := enginetest.StartMCP(t, "stack.yaml", "app0", `    options:
      authorization:
        test0: {}
      sse:
        keepalive:
          interval: PT0.1S
`+guardedStack("      lifetime: PT1S\n"), engine.WithClock(clock.Now))
	s := &stack{base: base, e: e, client: &http.Client{Timeout: 5 * time.Second}}
	t.Cleanup(s.client.CloseIdleConnections)
	resp, body := s.post(t, "", "", guardedInitialize, "Authorization", "Bearer test-token")
	require.Equal(t, 200, resp.StatusCode, body)
	sid := resp.Header.Get("Mcp-Session-Id")
	resp, body = s.post(t, sid, "2025-11-25", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Authorization", "Bearer test-token")
	require.Equal(t, 202, resp.StatusCode, body)

	open := func() (*http.Response, *bufio.Reader) {
		req, err := http.NewRequest(http.MethodGet, base, nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Authorization", "Bearer test-token")
		resp, err := s.client.Do(req)
		require.NoError(t, err)
		require.Equal(t, 200, resp.StatusCode)
		return resp, bufio.NewReader(resp.Body)
	}
	get, rd := open()
	defer get.Body.Close()
	readLines(t, rd, 3) // the priming event
	for range 9 {
		clock.Tick(t, s.e, 100*time.Millisecond)
		assert.Equal(t, []string{":\n", "\n"}, readLines(t, rd, 2), "a keep-alive while the token holds")
	}
	clock.Tick(t, s.e, 100*time.Millisecond)
	_, err := rd.ReadString('\n')
	assert.ErrorIs(t, err, io.EOF, "the stream ends once the token has expired")

	again, rd := open()
	defer again.Body.Close()
	readLines(t, rd, 3)
}

// FuzzAuthorization posts an initialize with a fuzzed Authorization
// header to a server with a guard: the answer is 200 (the guard's token,
// or none), 400 invalid_request or 401 invalid_token with its Bearer
// challenge, and nothing is left held.
func FuzzAuthorization(f *testing.F) {
	for _, v := range []string{"", "Bearer test-token", "bearer test-token", "Bearer ", "Bearer", "Basic dXNlcjpwYXNz",
		"Bearer test-token ", "Bearer  test-token", "Bearer eyJhbGciOiJub25lIn0.e30.", "BEARER test-token", "test-token"} {
		f.Add(v)
	}
	base, e := enginetest.StartMCP(f, "stack.yaml", "app0", guardedOptions)
	s := &stack{base: base, e: e, client: &http.Client{Timeout: 5 * time.Second}}
	f.Cleanup(s.client.CloseIdleConnections)
	f.Fuzz(func(t *testing.T, v string) {
		var hdr []string
		if v = enginetest.HeaderValue(v); v != "" {
			hdr = append(hdr, "Authorization", v)
		}
		resp, body := s.post(t, "", "", guardedInitialize, hdr...)
		challenge := resp.Header.Get("WWW-Authenticate")
		switch resp.StatusCode {
		case 200:
			assert.Empty(t, challenge)
			assert.True(t, v == "" || strings.EqualFold(v, "Bearer test-token"), "%q was taken", v)
		case 400:
			assert.True(t, strings.HasPrefix(challenge, `Bearer error="invalid_request"`), challenge)
		case 401:
			assert.True(t, strings.HasPrefix(challenge, `Bearer error="invalid_token"`), challenge)
		default:
			t.Fatalf("%q: %d %s", v, resp.StatusCode, body)
		}
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			del, _ := s.do(t, http.MethodDelete, "", append([]string{"Mcp-Session-Id", sid}, hdr...)...)
			require.Equal(t, 200, del.StatusCode, "the session's own caller ends it")
		}
		s.client.CloseIdleConnections()
		require.Eventually(t, s.released, 2*time.Second, time.Millisecond, "a worker still holds a buffer slot or a stream")
	})
}
