package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sluicehq/sluice/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The cache gateway test runs issue 29's several-instances case over real
// sockets and processes: two `sluice start` processes with one config, one
// real redis-server as their shared store, a go-sdk upstream that counts
// the tools/list calls it serves, and go-sdk clients on both instances.

var (
	sluiceBuildOnce sync.Once
	sluiceBin       string
	sluiceBuildErr  error
)

// sluiceBinary builds the sluice command once per test binary, without the
// PGO profile (the shipped build is TestSIGTERM's), and returns its path.
func sluiceBinary(t *testing.T) string {
	t.Helper()
	sluiceBuildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sluice-bin-")
		if err != nil {
			sluiceBuildErr = err
			return
		}
		sluiceBin = filepath.Join(dir, "sluice")
		cmd := exec.Command("go", "build", "-pgo=off", "-o", sluiceBin, ".")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			sluiceBuildErr = fmt.Errorf("go build sluice: %v\n%s", err, out.String())
		}
	})
	require.NoError(t, sluiceBuildErr)
	return sluiceBin
}

// cacheUpstream is a go-sdk MCP server whose tool list the test changes,
// counting the tools/list requests it answers.
type cacheUpstream struct {
	URL    string
	server *mcp.Server
	lists  atomic.Int32
}

func startCacheUpstream(t *testing.T) *cacheUpstream {
	t.Helper()
	u := &cacheUpstream{server: mcp.NewServer(&mcp.Implementation{Name: "tools", Version: "1.0.0"}, nil)}
	u.addTool("echo")
	u.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				u.lists.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return u.server }, nil))
	u.URL = serveLoopback(t, mux) + "/mcp"
	return u
}

// addTool adds a tool named name; the server tells its sessions with
// notifications/tools/list_changed.
func (u *cacheUpstream) addTool(name string) {
	mcp.AddTool(u.server, &mcp.Tool{Name: name, Description: "answers " + name},
		func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil, nil
		})
}

// cacheGatewayConfig is one gateway config for every instance: its port
// and Redis URL come from the environment (PORT, REDIS_URL).
func cacheGatewayConfig(upstream string) string {
	return fmt.Sprintf(`name: gateway
stores:
  redis0:
    type: redis
    options:
      url: "${{ env.REDIS_URL }}"
bindings:
`+frontYAML("${{ env.PORT }}", "/mcp")+`  mcp0:
    type: mcp
    kind: server
    exit: proxy0
    options:
      hosts: ["127.0.0.1:${{ env.PORT }}"]
  proxy0:
    type: mcp
    kind: proxy
    options:
      prefix: always
      cache:
        store: redis0
        ttl:
          tools: PT1H
    routes:
      - exit: client0
        when:
          - toolkit: up
  client0:
    type: mcp
    kind: client
    options:
      server: %s
`, upstream)
}

// instance is one `sluice start` process the test started.
type instance struct {
	URL  string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// kill ends the process with SIGKILL (a crash: no drain, no lease
// released) and waits for it.
func (in *instance) kill(t *testing.T) {
	t.Helper()
	_ = in.cmd.Process.Kill()
	select {
	case <-in.done:
	case <-time.After(5 * time.Second):
		t.Fatal("sluice did not die")
	}
}

// cacheLease is the instances' lease of the cache's locks
// (mcp.lease.ttl): a killed holder's lease runs out within it.
const cacheLease = 3 * time.Second

// startInstance runs the sluice binary on config with two workers until
// the test ends.
func startInstance(t *testing.T, config, redisURL string) *instance {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gateway.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(config), 0o644))
	port := freePort(t)
	cmd := exec.Command(sluiceBinary(t), "start", "-c", cfg, "-w", "2", "-e", filepath.Join(dir, "engine"),
		"--set", fmt.Sprintf("mcp.lease.ttl=PT%dS", int(cacheLease.Seconds())))
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port), "REDIS_URL="+redisURL)
	in := &instance{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = in.out, in.out
	require.NoError(t, cmd.Start())
	go func() {
		_ = cmd.Wait()
		close(in.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-in.done
		if t.Failed() {
			t.Logf("sluice on port %d:\n%s", port, in.out)
		}
	})
	require.Eventually(t, func() bool {
		select {
		case <-in.done:
			return true // exited: reported below
		default:
		}
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 15*time.Second, 20*time.Millisecond, "sluice did not listen: %s", in.out)
	select {
	case <-in.done:
		t.Fatalf("sluice exited: %s", in.out)
	default:
	}
	return in
}

// listClient is a go-sdk client session that counts the
// notifications/tools/list_changed it receives.
type listClient struct {
	*mcp.ClientSession
	changed chan struct{} // a wake-up for waitTools
	heard   atomic.Int32  // list_changed notifications received
}

func connectList(t *testing.T, ctx context.Context, endpoint string) *listClient {
	t.Helper()
	lc := &listClient{changed: make(chan struct{}, 16)}
	client := mcp.NewClient(&mcp.Implementation{Name: "cache-test", Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			lc.heard.Add(1)
			select {
			case lc.changed <- struct{}{}:
			default:
			}
		},
	})
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	lc.ClientSession = s
	return lc
}

// waitTools lists tools through c until want is among them, within limit.
func waitTools(t *testing.T, ctx context.Context, c *listClient, want string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		names := toolNames(t, ctx, c.ClientSession)
		if slices.Contains(names, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never listed; last list %v", want, names)
		}
		select {
		case <-c.changed:
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
}

// TestGatewayCacheTwoInstances: two gateways share one Redis. Exactly one
// lists the upstream's tools; both serve the list from the shared entry;
// a list_changed seen by the holder refreshes what both serve and reaches
// both instances' clients; when the holder is killed, the other takes the
// lease over within one lease time and keeps the entry current.
func TestGatewayCacheTwoInstances(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	redis := redistest.Start(t)
	up := startCacheUpstream(t)
	config := cacheGatewayConfig(up.URL)

	a := startInstance(t, config, redis.URL())
	ca := connectList(t, ctx, a.URL)
	assert.Equal(t, []string{"up__echo"}, toolNames(t, ctx, ca.ClientSession), "the first list after initialize is served")
	require.Equal(t, int32(1), up.lists.Load(), "instance a hydrated the tools once")

	b := startInstance(t, config, redis.URL())
	cb := connectList(t, ctx, b.URL)
	assert.Equal(t, []string{"up__echo"}, toolNames(t, ctx, cb.ClientSession))
	for range 10 {
		assert.Equal(t, []string{"up__echo"}, toolNames(t, ctx, ca.ClientSession))
		assert.Equal(t, []string{"up__echo"}, toolNames(t, ctx, cb.ClientSession))
	}
	assert.Equal(t, int32(1), up.lists.Load(), "both instances serve the shared entry: no list reached the upstream")

	up.addTool("second")
	waitTools(t, ctx, ca, "up__second", 10*time.Second)
	waitTools(t, ctx, cb, "up__second", 10*time.Second)
	assert.Equal(t, int32(2), up.lists.Load(), "one list_changed, one refresh in all")
	for i, c := range []*listClient{ca, cb} {
		assert.Eventually(t, func() bool { return c.heard.Load() > 0 }, 10*time.Second, 10*time.Millisecond,
			"the client of instance %d hears list_changed", i)
	}

	a.kill(t)
	up.addTool("third")
	// b takes the lease once a's runs out, and lists at once, since a's
	// last list_changed may be one it never saw.
	waitTools(t, ctx, cb, "up__third", cacheLease+10*time.Second)
	assert.Equal(t, int32(3), up.lists.Load(), "the new holder lists once on taking over")
	for range 10 {
		names := toolNames(t, ctx, cb.ClientSession)
		assert.Equal(t, []string{"up__echo", "up__second", "up__third"}, names)
	}
	assert.Equal(t, int32(3), up.lists.Load())
}

// servedFromCache lists tools through c until n lists in a row reach no
// upstream (the cache serves them), within limit.
func servedFromCache(t *testing.T, ctx context.Context, c *listClient, up *cacheUpstream, n int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for run := 0; run < n; {
		before := up.lists.Load()
		assert.Contains(t, toolNames(t, ctx, c.ClientSession), "up__echo")
		if up.lists.Load() == before {
			run++
			continue
		}
		run = 0
		require.True(t, time.Now().Before(deadline), "lists still reach the upstream")
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
}

// TestGatewayCacheRedisFaults: a gateway whose Redis is down at start
// lets sessions through without waiting out the cache's gate, serves
// lists through to its routes, and takes to the cache once Redis
// comes up; when Redis is lost mid-run, lists fall back to the routes at
// once (nothing hangs), and the cache serves again when it returns.
func TestGatewayCacheRedisFaults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	redis := redistest.Start(t)
	redis.Stop()
	up := startCacheUpstream(t)

	a := startInstance(t, cacheGatewayConfig(up.URL), redis.URL())
	ca := connectList(t, ctx, a.URL)
	for range 3 {
		before := up.lists.Load()
		start := time.Now()
		assert.Equal(t, []string{"up__echo"}, toolNames(t, ctx, ca.ClientSession), "Redis down at start: lists go to the routes")
		assert.Less(t, time.Since(start), 5*time.Second, "a list does not wait on the store")
		assert.Greater(t, up.lists.Load(), before, "served through")
	}
	assert.Contains(t, a.out.String(), "redis unreachable", "the store warns that Redis is down")
	assert.Contains(t, a.out.String(), "cache: store unavailable, served through", "the gate opened once the store told that Redis is down")
	assert.NotContains(t, a.out.String(), "list not settled in time", "the session was not held for the gate's 5 s")

	redis.Restart()
	servedFromCache(t, ctx, ca, up, 5, 20*time.Second)

	redis.Stop()
	for range 3 {
		start := time.Now()
		assert.Equal(t, []string{"up__echo"}, toolNames(t, ctx, ca.ClientSession), "Redis lost: lists still answered")
		assert.Less(t, time.Since(start), 5*time.Second, "a list does not wait on the store")
	}
	before := up.lists.Load()
	toolNames(t, ctx, ca.ClientSession)
	assert.Greater(t, up.lists.Load(), before, "with Redis lost, lists fall back to the routes")
	heard := ca.heard.Load()
	up.addTool("during")
	assert.Eventually(t, func() bool { return ca.heard.Load() > heard }, 10*time.Second, 10*time.Millisecond,
		"with Redis lost, a route's list_changed is passed on as it comes")
	waitTools(t, ctx, ca, "up__during", 10*time.Second)

	redis.Restart()
	servedFromCache(t, ctx, ca, up, 5, 20*time.Second)
	up.addTool("second")
	waitTools(t, ctx, ca, "up__second", 10*time.Second)
}
