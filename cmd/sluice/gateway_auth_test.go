package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// issuer mints the gateway's test tokens: RS256 JWTs signed with a key
// made for the test, whose public half the jwt guard is configured with.
type issuer struct {
	key    *rsa.PrivateKey
	signer jose.Signer
	jwk    string // the public key as a JWK, JSON
}

const testIssuer = "https://auth.sluice.test"

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	require.NoError(t, err)
	jwk, err := json.Marshal(jose.JSONWebKey{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"})
	require.NoError(t, err)
	return &issuer{key: key, signer: signer, jwk: string(jwk)}
}

// token signs claims: sub, scope, aud and an expiry d from now.
func (is *issuer) token(t *testing.T, sub, scope, aud string, d time.Duration) string {
	t.Helper()
	claims, err := json.Marshal(map[string]any{"iss": testIssuer, "sub": sub, "aud": aud, "scope": scope,
		"iat": time.Now().Unix(), "exp": time.Now().Add(d).Unix()})
	require.NoError(t, err)
	jws, err := is.signer.Sign(claims)
	require.NoError(t, err)
	tok, err := jws.CompactSerialize()
	require.NoError(t, err)
	return tok
}

// oauthGateway is a gateway whose mcp server checks bearer tokens with a
// jwt guard, serves its protected resource metadata, and whose proxy
// routes are all guarded: everything (go-sdk's everything-server) for
// the role mcp:tools, admin (the same upstream) for the role admin, and
// per (the same upstream again, for mcp:tools) through a client whose
// own routes let everyone call test_simple_text and only admins the
// other test_ tools.
func oauthGateway(t *testing.T, is *issuer) (endpoint string) {
	t.Helper()
	up := startGoEverything(t, 0, false)
	port := freePort(t)
	endpoint = fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	cfg := fmt.Sprintf(`name: gateway
guards:
  jwt0:
    type: jwt
    options:
      issuer: %[4]s
      audience: %[2]s
      keys: [%[3]s]
bindings:
%[6]s  mcp0:
    type: mcp
    kind: server
    exit: proxy0
    options:
      authorization:
        jwt0: {}
      protectedResource:
        resource: %[2]s
        authorizationServers: [%[4]s]
        scopes: [mcp:tools, admin]
  proxy0:
    type: mcp
    kind: proxy
    routes:
      - exit: route0
        when: [{toolkit: everything}]
        guarded: {jwt0: [mcp:tools]}
      - exit: route1
        when: [{toolkit: admin}]
        guarded: {jwt0: [admin]}
      - exit: route2
        when: [{toolkit: per}]
        guarded: {jwt0: [mcp:tools]}
  route0:
    type: mcp
    kind: client
    options: {server: %[5]q}
  route1:
    type: mcp
    kind: client
    options: {server: %[5]q}
  route2:
    type: mcp
    kind: client
    options: {server: %[5]q}
    routes:
      - exit: sys:http_client
        when: [{tool: test_simple_text}]
      - exit: sys:http_client
        when: [{tool: "test_*"}]
        guarded: {jwt0: [admin]}
      - exit: sys:http_client
        when: [{prompt: "*", resource: "*"}]
`, port, endpoint, is.jwk, testIssuer, up.URL, frontYAML(fmt.Sprint(port), "/mcp", "/.well-known/oauth-protected-resource*"))
	return startGateway(t, cfg, port, 2)
}

// bearerTransport sends a bearer token with every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectWithToken(ctx context.Context, endpoint, token string) (*mcp.ClientSession, error) {
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearerTransport{token}}}
	return mcp.NewClient(&mcp.Implementation{Name: "oauth-test", Version: "1"}, nil).Connect(ctx, tr, nil)
}

// initializeWith posts an initialize with an Authorization header (none
// when auth is "") and returns the response and its body.
func initializeWith(t *testing.T, endpoint, auth, sid, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

const oauthInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestGatewayOAuth puts the gateway in front of a real upstream as an
// OAuth resource server: JWTs from a test issuer, verified by the jwt
// guard; routes guarded by the token's scope; discovery as MCP clients
// do it. The Go SDK's client with each token sees exactly the routes its
// scope reaches; an anonymous, expired or mis-addressed token gets a 401
// naming the protected resource metadata, which the TypeScript SDK
// discovers from the challenge and from the well-known path and then
// uses a token with; a session serves only the identity that opened it.
func TestGatewayOAuth(t *testing.T) {
	is := newIssuer(t)
	endpoint := oauthGateway(t, is)
	prmURL := strings.TrimSuffix(endpoint, "/mcp") + "/.well-known/oauth-protected-resource/mcp"
	alice := is.token(t, "alice", "mcp:tools admin", endpoint, time.Hour)
	bob := is.token(t, "bob", "mcp:tools", endpoint, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	t.Run("scopes pick the routes", func(t *testing.T) {
		as, err := connectWithToken(ctx, endpoint, alice)
		require.NoError(t, err)
		defer as.Close()
		names := toolNames(t, ctx, as)
		assert.Contains(t, names, "everything__test_simple_text")
		assert.Contains(t, names, "admin__test_simple_text")
		res, err := as.CallTool(ctx, &mcp.CallToolParams{Name: "admin__test_simple_text"})
		require.NoError(t, err)
		assert.NotEmpty(t, text(t, res))

		bs, err := connectWithToken(ctx, endpoint, bob)
		require.NoError(t, err)
		defer bs.Close()
		names = toolNames(t, ctx, bs)
		assert.Contains(t, names, "everything__test_simple_text")
		for _, n := range names {
			assert.False(t, strings.HasPrefix(n, "admin__"), "bob sees %s", n)
		}
		res, err = bs.CallTool(ctx, &mcp.CallToolParams{Name: "admin__test_simple_text"})
		if err == nil {
			require.True(t, res.IsError, "bob called an admin tool")
			assert.Contains(t, text(t, res), "Unknown tool")
		} else {
			assert.Contains(t, err.Error(), "Unknown tool")
		}
	})

	t.Run("refused tokens name the metadata", func(t *testing.T) {
		for name, auth := range map[string]string{
			"anonymous":      "",
			"expired":        "Bearer " + is.token(t, "alice", "mcp:tools admin", endpoint, -time.Minute),
			"other audience": "Bearer " + is.token(t, "alice", "mcp:tools admin", "https://elsewhere.test/mcp", time.Hour),
			"other issuer":   "Bearer " + newIssuer(t).token(t, "alice", "mcp:tools admin", endpoint, time.Hour),
		} {
			resp, body := initializeWith(t, endpoint, auth, "", oauthInitialize)
			assert.Equal(t, 401, resp.StatusCode, "%s: %s", name, body)
			challenge := resp.Header.Get("WWW-Authenticate")
			assert.Contains(t, challenge, `error="invalid_token"`, name)
			assert.Contains(t, challenge, `resource_metadata="`+prmURL+`"`, name)
		}
		_, err := connectWithToken(ctx, endpoint, "not-a-jwt")
		require.Error(t, err, "the Go SDK's client is refused with a forged token")
	})

	t.Run("a session serves its own identity", func(t *testing.T) {
		resp, body := initializeWith(t, endpoint, "Bearer "+alice, "", oauthInitialize)
		require.Equal(t, 200, resp.StatusCode, body)
		sid := resp.Header.Get("Mcp-Session-Id")
		require.NotEmpty(t, sid)
		list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
		resp, body = initializeWith(t, endpoint, "Bearer "+bob, sid, list)
		assert.Equal(t, 404, resp.StatusCode, "bob used alice's session: %s", body)
		resp, body = initializeWith(t, endpoint, "", sid, list)
		assert.Equal(t, 404, resp.StatusCode, "an anonymous caller used alice's session: %s", body)
		resp, body = initializeWith(t, endpoint, "Bearer "+alice, sid, list)
		assert.Equal(t, 200, resp.StatusCode, body)
		assert.Contains(t, body, "admin__test_simple_text")
	})

	t.Run("per-tool routes of the client", func(t *testing.T) {
		bs, err := connectWithToken(ctx, endpoint, bob)
		require.NoError(t, err)
		defer bs.Close()
		res, err := bs.CallTool(ctx, &mcp.CallToolParams{Name: "per__test_simple_text"})
		require.NoError(t, err)
		assert.NotEmpty(t, text(t, res))

		// bob's call of an admin tool is refused with the scope to step
		// up to, before it goes upstream.
		call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"per__test_image_content","arguments":{}}}`
		resp, body := initializeWith(t, endpoint, "Bearer "+bob, "", oauthInitialize)
		require.Equal(t, 200, resp.StatusCode, body)
		sid := resp.Header.Get("Mcp-Session-Id")
		resp, body = initializeWith(t, endpoint, "Bearer "+bob, sid, call)
		assert.Equal(t, 403, resp.StatusCode, body)
		assert.Equal(t, `Bearer error="insufficient_scope", scope="admin", resource_metadata="`+prmURL+`"`, resp.Header.Get("WWW-Authenticate"))

		// The list tells which scopes a tool's route asks for.
		resp, body = initializeWith(t, endpoint, "Bearer "+bob, sid, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
		require.Equal(t, 200, resp.StatusCode, body)
		var list struct {
			Result struct {
				Tools []struct {
					Name            string           `json:"name"`
					SecuritySchemes []map[string]any `json:"securitySchemes"`
				} `json:"tools"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &list), body)
		schemes := map[string][]map[string]any{}
		for _, tool := range list.Result.Tools {
			schemes[tool.Name] = tool.SecuritySchemes
		}
		require.Contains(t, schemes, "per__test_image_content")
		assert.Equal(t, []map[string]any{{"type": "oauth2", "scopes": []any{"admin"}}}, schemes["per__test_image_content"])
		assert.Nil(t, schemes["per__test_simple_text"], "a tool of an unguarded route has none")
		assert.Nil(t, schemes["everything__test_image_content"], "nor a tool of a client without routes")

		as, err := connectWithToken(ctx, endpoint, alice)
		require.NoError(t, err)
		defer as.Close()
		res, err = as.CallTool(ctx, &mcp.CallToolParams{Name: "per__test_image_content"})
		require.NoError(t, err)
		require.False(t, res.IsError)
		require.NotEmpty(t, res.Content)
		prompts, err := as.ListPrompts(ctx, nil)
		require.NoError(t, err)
		var promptNames []string
		for _, p := range prompts.Prompts {
			promptNames = append(promptNames, p.Name)
		}
		assert.Contains(t, promptNames, "per__test_simple_prompt", "the third route serves prompts")
	})

	t.Run("TypeScript SDK discovery", func(t *testing.T) {
		stdout := runNodeScript(t, "ts-oauth-client.mjs", 60*time.Second, endpoint, alice, "admin__test_simple_text")
		var out struct {
			Status              int      `json:"status"`
			ResourceMetadataURL string   `json:"resourceMetadataUrl"`
			Scope               string   `json:"scope"`
			Error               string   `json:"error"`
			Tools               []string `json:"tools"`
			Called              string   `json:"called"`
		}
		var docs struct {
			Hinted    prm `json:"hinted"`
			WellKnown prm `json:"wellKnown"`
		}
		require.NoError(t, json.Unmarshal(stdout, &out), string(stdout))
		require.NoError(t, json.Unmarshal(stdout, &docs), string(stdout))
		assert.Equal(t, 401, out.Status)
		assert.Equal(t, prmURL, out.ResourceMetadataURL)
		assert.Equal(t, "mcp:tools admin", out.Scope)
		assert.Equal(t, "invalid_token", out.Error)
		want := prm{Resource: endpoint, AuthorizationServers: []string{testIssuer}, ScopesSupported: []string{"mcp:tools", "admin"}}
		assert.Equal(t, want, docs.Hinted)
		assert.Equal(t, want, docs.WellKnown)
		assert.Contains(t, out.Tools, "admin__test_simple_text")
		assert.NotEmpty(t, out.Called)
	})
}

// prm is the protected resource metadata as a client reads it.
type prm struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}
