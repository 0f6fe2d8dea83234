package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The URL-elicitation gateway tests run seed 000's two flows over real
// sockets: a go-sdk client that takes URL elicitation, `sluice start`
// (tcp → http → mcp server → mcp proxy → mcp client), a go-sdk upstream,
// and an authorization server whose /authorize redirects the "browser"
// (an HTTP client) to the redirect_uri with a code, as OAuth does.

// authServer serves GET /authorize?state=S&redirect_uri=R with a redirect
// to R?code=granted&state=S, and returns its base URL.
func authServer(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		to, err := url.Parse(q.Get("redirect_uri"))
		if err != nil || to.Scheme == "" {
			http.Error(w, "bad redirect_uri", http.StatusBadRequest)
			return
		}
		tq := to.Query()
		tq.Set("code", "granted")
		tq.Set("state", q.Get("state"))
		to.RawQuery = tq.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	return serveLoopback(t, mux)
}

// serveLoopback serves h on a loopback port until the test ends and
// returns its base URL.
func serveLoopback(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}

// linkUpstream is a go-sdk MCP server with two tools: whoami answers the
// authorization header its call's POST carried; link_account runs its own
// URL elicitation (the proxied flow): it asks its client to visit its
// /authorize, whose redirect comes back to its own /callback, and once the
// client accepted and the callback brought a code it tells the client the
// elicitation is complete and answers with the code.
type linkUpstream struct {
	URL     string // the MCP endpoint
	base    string
	mu      sync.Mutex
	pending map[string]chan string // by state
	n       atomic.Int32
}

func startLinkUpstream(t *testing.T) *linkUpstream {
	t.Helper()
	u := &linkUpstream{pending: map[string]chan string{}}
	server := mcp.NewServer(&mcp.Implementation{Name: "links", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami", Description: "the authorization the call carried"},
		func(_ context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Extra.Header.Get("Authorization")}}}, nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "link_account", Description: "links an account through the browser"}, u.link)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code=linked&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		ch := u.pending[r.URL.Query().Get("state")]
		u.mu.Unlock()
		if ch == nil {
			http.Error(w, "unknown state", http.StatusGone)
			return
		}
		ch <- r.URL.Query().Get("code")
		io.WriteString(w, "linked")
	})
	u.base = serveLoopback(t, mux)
	u.URL = u.base + "/mcp"
	return u
}

func (u *linkUpstream) link(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
	id := fmt.Sprintf("link-%d", u.n.Add(1))
	state := "st-" + id
	ch := make(chan string, 1)
	u.mu.Lock()
	u.pending[state] = ch
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		delete(u.pending, state)
		u.mu.Unlock()
	}()
	target := u.base + "/authorize?state=" + state + "&redirect_uri=" + url.QueryEscape(u.base+"/callback")
	res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: "Link your account", URL: target, ElicitationID: id})
	if err != nil {
		return nil, nil, err
	}
	if res.Action != "accept" {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "link " + res.Action}}}, nil, nil
	}
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case code := <-ch:
		if err := req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: id}); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "linked with " + code}}}, nil, nil
	case <-wait.Done():
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "link timed out"}}, IsError: true}, nil, nil
	}
}

// elicitGatewayConfig is a gateway to one upstream route whose mcp client
// asks the test guard oauth for its credentials when guarded; its http
// server routes the elicitation callback to the mcp server too.
func elicitGatewayConfig(port int, upstream, authorize string, guarded bool, timeout string) string {
	var b strings.Builder
	if guarded {
		fmt.Fprintf(&b, `guards:
  oauth:
    type: test
    options:
      preauthorize: "%s/authorize?state=7f3a9b1c&redirect_uri=https%%3A%%2F%%2Freplace.me%%2Fcallback"
      credentials: upstream-token
`, authorize)
	}
	fmt.Fprintf(&b, `bindings:
%[4]s  mcp0:
    type: mcp
    kind: server
    exit: proxy0
    options:
      hosts: ["127.0.0.1:%[1]d"]
      elicitation: {timeout: %[2]s}
  proxy0:
    type: mcp
    kind: proxy
    routes:
      - exit: route0
        when:
          - toolkit: up
  route0:
    type: mcp
    kind: client
    options:
      server: %[3]q
`, port, timeout, upstream, frontYAML(fmt.Sprint(port), "/mcp", "/mcp/auth/callback*"))
	if guarded {
		b.WriteString("      authorization: {oauth: {}}\n")
	}
	return "name: gateway\n" + b.String()
}

// urlClient connects a go-sdk client that declares URL elicitation, with
// handler answering it; every notifications/elicitation/complete's id goes
// to completed.
func urlClient(t *testing.T, ctx context.Context, endpoint string, handler func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error), completed chan<- string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "url-client", Version: "1.0.0"}, &mcp.ClientOptions{
		Capabilities:       &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: handler,
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			completed <- req.Params.ElicitationID
		},
	})
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() {
		// A session whose handler is stuck would wait for it on Close.
		done := make(chan struct{})
		go func() { session.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("the client session did not close")
		}
	})
	return session
}

// browse GETs u, following redirects, and returns the last response's
// status, body and URL. It reports failure as an error, not through t, as
// it runs in the client's elicitation handler too.
func browse(ctx context.Context, u string) (int, string, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, "", "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Request.URL.String(), err
}

// browseStatus is browse's status, failing t on an error.
func browseStatus(t *testing.T, ctx context.Context, u string) int {
	t.Helper()
	status, _, _, err := browse(ctx, u)
	require.NoError(t, err)
	return status
}

// receive returns what c brings, failing t if nothing comes.
func receive[T any](t *testing.T, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("the client's handler never ran")
		var zero T
		return zero
	}
}

// awaitComplete returns the id of the notifications/elicitation/complete
// the client got. The client runs notification handlers apart from the
// call's result, so it may come just after the result.
func awaitComplete(t *testing.T, completed <-chan string) string {
	t.Helper()
	select {
	case id := <-completed:
		return id
	case <-time.After(10 * time.Second):
		t.Error("no notifications/elicitation/complete")
		return ""
	}
}

// TestGatewayURLElicitationGuarded: the mcp client kind's guard needs a
// preauthorization before the upstream call. The client is sent a URL
// elicitation whose redirect_uri is the gateway's own callback and whose
// state names its session; the browser's visit reaches the gateway's
// callback, the guard's credentials then go upstream, and the call
// completes. A declined or timed-out elicitation ends the call with
// -32000, and its callback is gone (410) afterwards; a callback with a
// state the gateway did not issue, or with its state twice, is 410 and
// leaves the real one pending.
func TestGatewayURLElicitationGuarded(t *testing.T) {
	up := startLinkUpstream(t)
	as := authServer(t)
	port := freePort(t)
	endpoint := startGateway(t, elicitGatewayConfig(port, up.URL, as, true, "PT60S"), port, 2)
	callback := "http://127.0.0.1:" + fmt.Sprint(port) + "/mcp/auth/callback"

	t.Run("completed", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		completed := make(chan string, 4)
		type seen struct {
			params *mcp.ElicitParams
			replay string // the callback URL the browser reached
		}
		handled := make(chan seen, 1)
		// The browser is the user's, not the request's: its visits run on
		// the test's context, since the client cancels the handler's once
		// the call's result has come, which the gateway sends as soon as
		// the callback reaches it, perhaps before the visit's response is
		// read.
		session := urlClient(t, ctx, endpoint, func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			target, err := url.Parse(req.Params.URL)
			if err != nil {
				return nil, err
			}
			state := target.Query().Get("state")
			// A state the gateway did not issue: its original part changed.
			forged, _ := strings.CutSuffix(state, "7f3a9b1c")
			status, body, _, err := browse(ctx, callback+"?code=granted&state="+url.QueryEscape(forged+"0000"))
			if err != nil {
				return nil, err
			}
			assert.Equal(t, http.StatusGone, status, "a forged state")
			assert.Equal(t, "Authorization session expired or unknown.", body)
			// The real state given twice has no one reading: the
			// upstream, sent the URL, could read the other one.
			twice := url.QueryEscape(state)
			status, _, _, err = browse(ctx, callback+"?code=granted&state="+twice+"&state="+twice)
			if err != nil {
				return nil, err
			}
			assert.Equal(t, http.StatusGone, status, "the state given twice")
			status, body, replay, err := browse(ctx, req.Params.URL)
			if err != nil {
				return nil, err
			}
			assert.Equal(t, http.StatusOK, status, body)
			handled <- seen{req.Params, replay}
			return &mcp.ElicitResult{Action: "accept"}, nil
		}, completed)
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
		require.NoError(t, err)
		assert.False(t, res.IsError)
		assert.Equal(t, "Bearer upstream-token", text(t, res), "the guard's credentials went upstream")

		// The result may overtake the handler's return: the gateway
		// answers once the callback came, before the client's answer.
		got := receive(t, handled)
		asked := got.params
		assert.Equal(t, "url", asked.Mode)
		target, err := url.Parse(asked.URL)
		require.NoError(t, err)
		assert.Equal(t, callback, target.Query().Get("redirect_uri"), "redirect_uri is the gateway's callback")
		assert.Equal(t, session.ID()+"."+asked.ElicitationID+".7f3a9b1c", target.Query().Get("state"))
		assert.Equal(t, asked.ElicitationID, awaitComplete(t, completed))
		assert.Equal(t, http.StatusGone, browseStatus(t, ctx, got.replay), "an elicitation completes once")
	})

	// The client declines; or it accepts (the user opened the link) and
	// the callback never comes, on a gateway whose elicitation.timeout is
	// one second.
	shortPort := freePort(t)
	short := startGateway(t, elicitGatewayConfig(shortPort, up.URL, as, true, "PT1S"), shortPort, 1)
	for _, tc := range []struct {
		name, endpoint, action, message string
	}{
		{"declined", endpoint, "decline", "Authorization declined"},
		{"timeout", short, "accept", "Authorization timed out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			asked := make(chan string, 1)
			session := urlClient(t, ctx, tc.endpoint, func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked <- req.Params.URL
				return &mcp.ElicitResult{Action: tc.action}, nil
			}, make(chan string, 4))
			_, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
			require.Error(t, err)
			assert.Equal(t, int64(-32000), rpcCode(t, err))
			assert.Contains(t, err.Error(), tc.message)
			assert.Equal(t, http.StatusGone, browseStatus(t, ctx, receive(t, asked)), "the elicitation's callback afterwards")
		})
	}
}

// TestGatewayURLElicitationProxied: the upstream runs its own URL
// elicitation (its callback is its own). The gateway carries its
// elicitation/create to the client unchanged, the client's answer back,
// and its notifications/elicitation/complete to the client; a decline
// reaches the upstream.
func TestGatewayURLElicitationProxied(t *testing.T) {
	up := startLinkUpstream(t)
	port := freePort(t)
	endpoint := startGateway(t, elicitGatewayConfig(port, up.URL, "", false, "PT60S"), port, 2)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	completed := make(chan string, 4)
	var decline atomic.Bool
	asked := make(chan *mcp.ElicitParams, 2)
	// The browser's visit runs on the test's context, as in
	// TestGatewayURLElicitationGuarded.
	session := urlClient(t, ctx, endpoint, func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked <- req.Params
		if decline.Load() {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		status, body, _, err := browse(ctx, req.Params.URL)
		if err != nil {
			return nil, err
		}
		assert.Equal(t, http.StatusOK, status, body)
		return &mcp.ElicitResult{Action: "accept"}, nil
	}, completed)

	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "link_account"})
	require.NoError(t, err)
	assert.False(t, res.IsError, text(t, res))
	assert.Equal(t, "linked with linked", text(t, res))
	first := receive(t, asked)
	assert.Equal(t, "url", first.Mode)
	assert.Equal(t, "link-1", first.ElicitationID)
	assert.Equal(t, up.base+"/authorize?state=st-link-1&redirect_uri="+url.QueryEscape(up.base+"/callback"), first.URL,
		"the upstream's own URL, unchanged")
	assert.Equal(t, "link-1", awaitComplete(t, completed))

	decline.Store(true)
	res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "link_account"})
	require.NoError(t, err)
	assert.Equal(t, "link decline", text(t, res), "the decline reached the upstream")
}
