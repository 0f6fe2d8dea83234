package client_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding"
	_ "github.com/sluicehq/sluice/binding/all"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/internal/enginetest"
)

func freePort(t testing.TB) int { return enginetest.FreePort(t) }

func waitListen(t testing.TB, addr string) { enginetest.WaitListen(t, addr) }

var (
	buildOnce sync.Once
	evsrvPath string
	buildErr  error
)

// everythingServer builds go-sdk's conformance everything-server once.
func everythingServer(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcpclient-evsrv")
		if err != nil {
			buildErr = err
			return
		}
		evsrvPath = filepath.Join(dir, "evsrv")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", "build", "-o", evsrvPath,
			"github.com/modelcontextprotocol/go-sdk/conformance/everything-server").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("build everything-server: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return evsrvPath
}

// upstream is a running everything-server.
type upstream struct {
	addr string
	cmd  *exec.Cmd
	args []string
}

func startUpstream(t testing.TB, stateful bool, port int) *upstream {
	t.Helper()
	everythingServer(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := []string{"-http=" + addr}
	if stateful {
		args = append(args, "-stateless=false")
	}
	u := &upstream{addr: addr, args: args}
	u.start(t)
	return u
}

func (u *upstream) start(t testing.TB) {
	t.Helper()
	u.cmd = exec.Command(everythingServer(t), u.args...)
	u.cmd.Stdout, u.cmd.Stderr = io.Discard, io.Discard
	require.NoError(t, u.cmd.Start())
	cmd := u.cmd
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	waitListen(t, u.addr)
}

func (u *upstream) stop() {
	_ = u.cmd.Process.Kill()
	_ = u.cmd.Wait()
}

// startGateway starts tcp → http → mcp server → mcp client → the
// upstream, and returns the gateway's MCP endpoint.
func startGateway(t testing.TB, server, clientOptions string) string {
	return startGatewayVia(t, server, clientOptions, "")
}

// startGatewayVia is startGateway with an mcp proxy between the server and
// the client when proxyOptions (YAML under the proxy's options:) is set;
// its one route is toolkit up.
func startGatewayVia(t testing.TB, server, clientOptions, proxyOptions string, opts ...engine.Option) string {
	t.Helper()
	endpoint, _ := startGatewayEngine(t, server, clientOptions, proxyOptions, opts...)
	return endpoint
}

// startGatewayEngine is startGatewayVia that also returns the engine.
func startGatewayEngine(t testing.TB, server, clientOptions, proxyOptions string, opts ...engine.Option) (string, *engine.Engine) {
	t.Helper()
	exit, rest := "client0", ""
	if proxyOptions != "" {
		exit = "proxy0"
		rest = "  proxy0:\n    type: mcp\n    kind: proxy\n    options:\n      " + proxyOptions +
			"\n    routes:\n      - exit: client0\n        when:\n          - toolkit: up\n"
	}
	rest += fmt.Sprintf("  client0:\n    type: mcp\n    kind: client\n    options:\n      server: %s\n%s", server, clientOptions)
	return enginetest.StartMCP(t, "gateway.yaml", exit, rest, opts...)
}

type progressLog struct {
	mu sync.Mutex
	p  []float64
}

func (l *progressLog) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	l.mu.Lock()
	l.p = append(l.p, req.Params.Progress)
	l.mu.Unlock()
}

func (l *progressLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.p)
}

// progressCall is a call of the tool t that asks for progress, with the
// token p.
func progressCall() *mcp.CallToolParams {
	call := &mcp.CallToolParams{Name: "t"}
	call.SetProgressToken("p")
	return call
}

// connectLogged connects as connect does and logs the progress
// notifications the session receives.
func connectLogged(t *testing.T, ctx context.Context, endpoint, version string) (*mcp.ClientSession, *progressLog) {
	t.Helper()
	pl := &progressLog{}
	return connect(t, ctx, endpoint, version, pl), pl
}

func connect(t *testing.T, ctx context.Context, endpoint, version string, pl *progressLog) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if pl != nil {
		opts.ProgressNotificationHandler = pl.handler
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpclient-test", Version: "1.0.0"}, opts)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	return session
}

func callText(t *testing.T, ctx context.Context, s *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.False(t, res.IsError, "%s: %+v", name, res.Content)
	require.NotEmpty(t, res.Content)
	return res.Content[0].(*mcp.TextContent).Text
}

// exercise runs the scenario of the brief against a gateway endpoint.
func exercise(t *testing.T, endpoint, version string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, pl := connectLogged(t, ctx, endpoint, version)

	tools, err := s.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	assert.Subset(t, names, []string{"test_simple_text", "test_tool_with_progress", "test_error_handling"})

	assert.Equal(t, "This is a simple text response for testing.", callText(t, ctx, s, "test_simple_text", nil))

	long := &mcp.CallToolParams{Name: "test_tool_with_progress", Arguments: map[string]any{}}
	long.SetProgressToken("tok-" + version)
	res, err := s.CallTool(ctx, long)
	require.NoError(t, err)
	require.False(t, res.IsError)
	assert.Eventually(t, func() bool { return pl.len() == 3 }, 3*time.Second, 10*time.Millisecond, "three progress notifications")
	pl.mu.Lock()
	assert.Equal(t, []float64{0, 50, 100}, pl.p)
	pl.mu.Unlock()

	read, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static-text"})
	require.NoError(t, err)
	require.Len(t, read.Contents, 1)
	assert.Contains(t, read.Contents[0].Text, "static")

	prompt, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_prompt_with_arguments",
		Arguments: map[string]string{"arg1": "alpha", "arg2": "beta"}})
	require.NoError(t, err)
	require.NotEmpty(t, prompt.Messages)
	assert.Contains(t, prompt.Messages[0].Content.(*mcp.TextContent).Text, "alpha")

	// An unknown tool is the upstream's error, relayed.
	res, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"})
	if err == nil {
		assert.True(t, res.IsError)
	}

	require.NoError(t, s.Close())
}

func TestStatefulUpstream(t *testing.T) {
	up := startUpstream(t, true, freePort(t))
	endpoint := startGateway(t, "http://"+up.addr+"/mcp", "")
	for _, v := range []string{"2025-11-25", "2025-06-18", "2026-07-28"} {
		t.Run(v, func(t *testing.T) { exercise(t, endpoint, v) })
	}
}

// TestStatelessUpstream offers 2026-07-28 first, so the client discovers
// the stateless upstream and uses it without a session.
func TestStatelessUpstream(t *testing.T) {
	up := startUpstream(t, false, freePort(t))
	endpoint := startGateway(t, "http://"+up.addr+"/mcp", "      versions: [2026-07-28, 2025-11-25]\n")
	for _, v := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(v, func(t *testing.T) { exercise(t, endpoint, v) })
	}
}

// TestDefaultVersion checks that a client without options.versions
// speaks 2025-11-25, as Zilla's does: its first request upstream is
// initialize at that version, with no server/discover before it.
func TestDefaultVersion(t *testing.T) {
	methods := make(chan string, 16)
	server := serveUpstream(t, false, func(w http.ResponseWriter, r *http.Request, msg, id string) {
		methods <- r.Header.Get("Mcp-Protocol-Version") + " " + between(msg, `"method":"`, `"`)
		switch {
		case !strings.Contains(msg, `"id":`):
			w.WriteHeader(http.StatusAccepted)
		default:
			answerOK(w, id)
		}
	})
	// serveUpstream answers initialize itself and hands every other
	// request to the handler, so a server/discover sent first would be
	// the first method seen; what should come is the initialized
	// notification, at the negotiated version.
	endpoint := startGateway(t, server, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := connect(t, ctx, endpoint, "2025-11-25", nil)
	defer s.Close()
	select {
	case m := <-methods:
		assert.Equal(t, "2025-11-25 notifications/initialized", m)
	case <-ctx.Done():
		t.Fatal("no request reached the upstream")
	}
}

func TestLegacyOnlyVersions(t *testing.T) {
	up := startUpstream(t, true, freePort(t))
	endpoint := startGateway(t, "http://"+up.addr+"/mcp", "      versions: [2025-06-18]\n      timeout: PT10S\n")
	exercise(t, endpoint, "2025-11-25")
}

// TestReinitialize restarts the upstream between calls: its sessions are
// gone, and the next call re-initializes and still succeeds.
func TestReinitialize(t *testing.T) {
	port := freePort(t)
	up := startUpstream(t, true, port)
	endpoint := startGateway(t, "http://"+up.addr+"/mcp", "      versions: [2025-11-25]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := connect(t, ctx, endpoint, "2025-11-25", nil)
	defer s.Close()
	callText(t, ctx, s, "test_simple_text", nil)

	up.stop()
	up.start(t)
	for i := range 3 {
		assert.Equal(t, "This is a simple text response for testing.", callText(t, ctx, s, "test_simple_text", nil), "call %d", i)
	}
}

// tinyUpstream serves a minimal MCP upstream at /mcp: initialize, 202 for
// notifications, a one-tool tools/list, and tools/call answered by call
// with the request's body and id (n counts the calls from 0). Every response carries Connection: close
// when closeEach is set. It returns the upstream's URL.
func tinyUpstream(t *testing.T, closeEach bool, call func(w http.ResponseWriter, msg, id string, n int)) string {
	t.Helper()
	var mu sync.Mutex
	calls := 0
	return serveUpstream(t, closeEach, func(w http.ResponseWriter, _ *http.Request, msg, id string) {
		switch {
		case !strings.Contains(msg, `"id":`):
			w.WriteHeader(http.StatusAccepted)
		case strings.Contains(msg, `"method":"tools/call"`):
			mu.Lock()
			n := calls
			calls++
			mu.Unlock()
			call(w, msg, id, n)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`, id)
		}
	})
}

// serveUpstream serves an MCP upstream at /mcp on a loopback port until the
// test ends and returns its URL. It answers only POSTs, and initialize
// itself with the session s1; handle answers the rest, given the request's
// body and id. Every response carries Connection: close when closeEach is
// set.
func serveUpstream(t testing.TB, closeEach bool, handle func(w http.ResponseWriter, r *http.Request, msg, id string)) string {
	t.Helper()
	return serveUpstreamConns(t, closeEach, handle, nil)
}

// serveUpstreamConns is serveUpstream that keeps conns at the number of
// connections open to the upstream, when it is not nil.
func serveUpstreamConns(t testing.TB, closeEach bool, handle func(w http.ResponseWriter, r *http.Request, msg, id string), conns *atomic.Int64) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if closeEach {
			w.Header().Set("Connection", "close")
		}
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		msg := string(body)
		id := between(msg, `"id":`, `,`)
		if strings.Contains(msg, `"method":"initialize"`) {
			answerInitialize(w, id, "s1")
			return
		}
		handle(w, r, msg, id)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	if conns != nil {
		srv.ConnState = func(_ net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				conns.Add(1)
			case http.StateClosed, http.StateHijacked:
				conns.Add(-1)
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String() + "/mcp"
}

// answerInitialize answers initialize as a 2025-11-25 upstream with tools,
// giving the session id sid ("": none, as a stateless upstream).
func answerInitialize(w http.ResponseWriter, id, sid string) {
	if sid != "" {
		w.Header().Set("Mcp-Session-Id", sid)
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"tiny","version":"1"}}}`, id)
}

// hangUp closes the connection of w without a response.
func hangUp(w http.ResponseWriter) {
	if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
		conn.Close()
	}
}

// answerDiscover answers server/discover as a stateless upstream that
// speaks 2026-07-28 only and has tools.
func answerDiscover(w http.ResponseWriter, id string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"tiny","version":"1"}}}`, id)
}

// answerOK answers a tools/call with the text "ok", as JSON.
func answerOK(w http.ResponseWriter, id string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, id)
}

// TestUpstreamDies cuts a tiny upstream's connection in a tools/call: mid
// event stream, or before any response. The downstream gets a JSON-RPC
// error at once, not at the call's 20 s timeout: the engine's clock stands
// still, so no timeout can give it. The gateway keeps serving.
func TestUpstreamDies(t *testing.T) {
	midStream := func(w http.ResponseWriter, _, id string, n int) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n")
		w.(http.Flusher).Flush()
		if n == 0 {
			hangUp(w)
			return
		}
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n\n", id)
	}
	beforeAnswer := func(w http.ResponseWriter, _, id string, n int) {
		if n == 0 {
			hangUp(w)
			return
		}
		answerOK(w, id)
	}
	for name, call := range map[string]func(http.ResponseWriter, string, string, int){"mid-stream": midStream, "before answering": beforeAnswer} {
		t.Run(name, func(t *testing.T) {
			endpoint := startGatewayVia(t, tinyUpstream(t, false, call), "      versions: [2025-11-25]\n      timeout: PT20S\n", "",
				engine.WithClock(enginetest.NewClock().Now))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s := connect(t, ctx, endpoint, "2025-11-25", nil)
			defer s.Close()

			_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "t"})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "Upstream")

			assert.Equal(t, "ok", callText(t, ctx, s, "t", nil))
		})
	}
}

// TestUpstreamClosesEachConnection: an upstream that answers every
// request with Connection: close (its response and its end of stream
// arrive together, often before the call has granted credit for the
// body) has every call answered.
func TestUpstreamClosesEachConnection(t *testing.T) {
	server := tinyUpstream(t, true, func(w http.ResponseWriter, _, id string, _ int) { answerOK(w, id) })
	endpoint := startGateway(t, server, "      versions: [2025-11-25]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := connect(t, ctx, endpoint, "2025-11-25", nil)
	defer s.Close()
	for range 20 {
		assert.Equal(t, "ok", callText(t, ctx, s, "t", nil))
	}
}

// TestLargeAnswers: results larger than a buffer slot stream through the
// gateway whole, as JSON and as an event stream, to a 2025 session and to
// a 2026-07-28 client, for calls whose arguments outgrow a slot too. Each
// DATA the mcp server forwards into a chunked response costs padding on
// top of its payload: the server must keep the credit it gave, or its
// offer shrinks below what the mcp client has sent and the answer is
// reset.
func TestLargeAnswers(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, size := range []int{100_000, 2_000_000} {
			for _, sse := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%d/sse=%v", version, size, sse), func(t *testing.T) {
					big := strings.Repeat("0123456789", size/10)
					server := tinyUpstream(t, false, func(w http.ResponseWriter, _, id string, _ int) {
						result := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`, id, big)
						if sse {
							w.Header().Set("Content-Type", "text/event-stream")
							fmt.Fprintf(w, "event: message\ndata: %s\n\n", result)
							return
						}
						w.Header().Set("Content-Type", "application/json")
						fmt.Fprint(w, result)
					})
					endpoint := startGateway(t, server, "      versions: [2025-11-25]\n")
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					s := connect(t, ctx, endpoint, version, nil)
					defer s.Close()
					for range 2 {
						got := callText(t, ctx, s, "t", map[string]any{"x": big[:size/2]})
						require.Len(t, got, len(big))
						require.True(t, got == big, "the text came back changed")
					}
				})
			}
		}
	}
}

// TestLargeCallsThroughProxy: through mcp server → proxy (prefix always,
// so the name is rewritten) → client, a call whose arguments outgrow a
// buffer slot, with its name after them as the Go SDK writes it, reaches
// the upstream whole under its own name, and a large answer comes back.
func TestLargeCallsThroughProxy(t *testing.T) {
	big := strings.Repeat("0123456789", 100_000)
	server := tinyUpstream(t, false, func(w http.ResponseWriter, msg, id string, _ int) {
		text := "bad"
		if strings.Contains(msg, `"name":"t"`) && strings.Contains(msg, `"x":"`+big+`"`) {
			text = big
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`, id, text)
	})
	endpoint := startGatewayVia(t, server, "      versions: [2025-11-25]\n", "prefix: always")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := connect(t, ctx, endpoint, "2025-11-25", nil)
	defer s.Close()
	for range 2 {
		got := callText(t, ctx, s, "up__t", map[string]any{"x": big})
		require.Len(t, got, len(big), "the upstream saw its name and the whole argument")
	}
}

// TestNotificationBurst: a tool that reports 2,000 progress steps before
// its answer, faster than the client reads them, has every step and its
// answer delivered, in order. (The mcp server's response queue was one
// buffer slot: it dropped events past 32 KiB, and the answer with them.)
func TestNotificationBurst(t *testing.T) {
	const steps = 2000
	server := tinyUpstream(t, false, func(w http.ResponseWriter, _, id string, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range steps {
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":%d,\"message\":\"step %d of a long job, with a message about a hundred bytes long\"}}\n\n", i, i)
		}
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n\n", id)
	})
	endpoint := startGateway(t, server, "      versions: [2025-11-25]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, pl := connectLogged(t, ctx, endpoint, "2025-11-25")
	defer s.Close()
	call := progressCall()
	res, err := s.CallTool(ctx, call)
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Eventually(t, func() bool { return pl.len() == steps }, 5*time.Second, 10*time.Millisecond, "every step arrives")
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for i, p := range pl.p {
		require.Equal(t, float64(i), p, "step %d in order", i)
	}
}

// TestUpstreamDown: nothing listens upstream; initialize fails with an
// error, not a hang, and not at the 5 s timeout: the engine's clock
// stands still.
func TestUpstreamDown(t *testing.T) {
	endpoint := startGatewayVia(t, fmt.Sprintf("http://127.0.0.1:%d/mcp", freePort(t)), "      versions: [2025-11-25]\n      timeout: PT5S\n", "",
		engine.WithClock(enginetest.NewClock().Now))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	_, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, nil)
	require.Error(t, err)
}

func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return "null"
	}
	s = s[i+len(from):]
	if j := strings.IndexAny(s, to+"}"); j >= 0 {
		return s[:j]
	}
	return s
}

func TestOptions(t *testing.T) {
	schema, err := config.NewSchema(append(binding.Fragments(), engine.ComponentFragments()...)...)
	require.NoError(t, err)
	for _, tt := range []struct{ name, options, want string }{
		{"no server", "      versions: [2025-11-25]\n", `c.yaml:6: bindings.client0.options: missing required key "server"`},
		{"server option", "      server: http://127.0.0.1:1/mcp\n      origins: [\"http://x\"]\n", "options.origins is an option of the server kind"},
		{"proxy option", "      server: http://127.0.0.1:1/mcp\n      prefix: always\n", "options.prefix is an option of the proxy kind"},
		{"bad version", "      server: http://127.0.0.1:1/mcp\n      versions: [1999-01-01]\n", "unsupported protocol version"},
		{"bad timeout", "      server: http://127.0.0.1:1/mcp\n      timeout: soon\n", "options.timeout"},
		{"short key", "      server: http://127.0.0.1:1/mcp\n      inputRequired:\n        key: c2hvcnQ=\n", "options.inputRequired.key: want at least 32 bytes in base64"},
		{"bad key", "      server: http://127.0.0.1:1/mcp\n      inputRequired:\n        key: \"not base64!\"\n", "options.inputRequired.key"},
		{"bad round timeout", "      server: http://127.0.0.1:1/mcp\n      inputRequired:\n        roundTimeout: later\n", "options.inputRequired.roundTimeout"},
		{"no pending", "      server: http://127.0.0.1:1/mcp\n      inputRequired:\n        maxPending: 0\n", "maxPending"},
		{"key and store", "      server: http://127.0.0.1:1/mcp\n      inputRequired:\n        key: " + strings.Repeat("QUFB", 11) + "\n        store: keys0\n",
			"c.yaml:10: bindings.client0.options.inputRequired.store: mcp client0: options.inputRequired takes key or store, not both"},
		{"unknown store", "      server: http://127.0.0.1:1/mcp\n      inputRequired:\n        store: nope\n",
			`c.yaml:9: bindings.client0.options.inputRequired.store: mcp client0: options.inputRequired.store names store "nope", which is not configured`},
		{"server's round cap", "      server: http://127.0.0.1:1/mcp\n      inputRequired:\n        maxRounds: 3\n", "maxRounds"},
		// No TLS yet: an https upstream is refused, not spoken to in
		// cleartext.
		{"https server", "      server: https://127.0.0.1:1/mcp\n", `c.yaml:7: bindings.client0.options.server: "https://127.0.0.1:1/mcp" does not match the pattern ^http://`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := "name: test\nbindings:\n  client0:\n    type: mcp\n    kind: client\n    options:\n" + tt.options
			cfg, err := config.Load("c.yaml", []byte(src), schema)
			if err == nil {
				require.NoError(t, binding.Resolve(cfg))
				var e *engine.Engine
				e, err = engine.New(cfg, engine.WithWorkers(1), engine.WithPin(false), engine.WithBindings(binding.Factory),
					engine.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
				if err == nil {
					err = e.Start()
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
					_ = e.Stop(ctx)
					cancel()
				}
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestCancel cancels a call the upstream never answers: the upstream gets
// notifications/cancelled with the request's id, and the session goes on.
func TestCancel(t *testing.T) {
	cancelled := make(chan string, 4)
	slow := make(chan struct{}, 1) // the upstream has the call
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	server := serveUpstream(t, false, func(w http.ResponseWriter, r *http.Request, msg, id string) {
		switch {
		case strings.Contains(msg, `notifications/cancelled`):
			cancelled <- msg
			w.WriteHeader(http.StatusAccepted)
		case !strings.Contains(msg, `"id":`):
			w.WriteHeader(http.StatusAccepted)
		case strings.Contains(msg, `"name":"slow"`):
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			slow <- struct{}{}
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, id)
		}
	})

	endpoint := startGateway(t, server, "      versions: [2025-11-25]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := connect(t, ctx, endpoint, "2025-11-25", nil)
	defer s.Close()

	// Cancelled once the upstream has it (a timeout of the call's own could
	// come before the call reached the upstream on a slow machine).
	callCtx, callCancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-slow:
		case <-ctx.Done():
		}
		callCancel()
	}()
	_, err := s.CallTool(callCtx, &mcp.CallToolParams{Name: "slow"})
	callCancel()
	require.Error(t, err)
	assert.Contains(t, enginetest.Receive(t, cancelled, "notifications/cancelled at the upstream"), `"requestId":`)
	assert.Equal(t, "ok", callText(t, ctx, s, "fast", nil))
}

// TestTimeoutRestartsOnNotifications: with a 1 s timeout, a tool that
// reports progress every 200 ms for 2.4 s is answered, with every step;
// one that falls silent gets "Upstream timeout" once the timeout has
// passed. The engine runs on a manual clock, which the test moves before
// letting the upstream send each step.
func TestTimeoutRestartsOnNotifications(t *testing.T) {
	const steps = 12
	clock := enginetest.NewClock()
	entered := make(chan string, 2) // the upstream has a call: the gateway has armed its deadline
	step := make(chan struct{})     // the upstream may send its next step
	quit := make(chan struct{})
	server := tinyUpstream(t, false, func(w http.ResponseWriter, msg, id string, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		if strings.Contains(msg, `"silent"`) {
			entered <- "silent"
			<-quit // never answers
			return
		}
		entered <- "steps"
		for i := range steps {
			select {
			case <-step:
			case <-quit:
				return
			}
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":%d}}\n\n", i)
			w.(http.Flusher).Flush()
		}
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n\n", id)
	})
	t.Cleanup(func() { close(quit) })
	endpoint, e := startGatewayEngine(t, server, "      versions: [2025-11-25]\n      timeout: PT1S\n", "", engine.WithClock(clock.Now))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, pl := connectLogged(t, ctx, endpoint, "2025-11-25")
	defer s.Close()
	call := progressCall()
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := s.CallTool(ctx, call)
		done <- result{res, err}
	}()
	require.Equal(t, "steps", <-entered)
	for i := range steps {
		clock.Tick(t, e, 200*time.Millisecond)
		step <- struct{}{}
		require.Eventually(t, func() bool { return pl.len() == i+1 }, 5*time.Second, time.Millisecond,
			"step %d relayed", i)
	}
	r := <-done
	require.NoError(t, r.err)
	require.False(t, r.res.IsError, "%+v", r.res.Content)

	errc := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "t", Arguments: map[string]any{"mode": "silent"}})
		errc <- err
	}()
	require.Equal(t, "silent", <-entered)
	clock.Tick(t, e, time.Second-time.Millisecond)
	enginetest.Settle(t, e)
	select {
	case err := <-errc:
		t.Fatalf("cut a millisecond before the timeout: %v", err)
	default:
	}
	// Timeouts are swept every timeout/20.
	clock.Tick(t, e, 50*time.Millisecond)
	select {
	case err := <-errc:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "Upstream timeout")
	case <-time.After(10 * time.Second):
		t.Fatal("the silent call was not cut once the timeout had passed")
	}
}
