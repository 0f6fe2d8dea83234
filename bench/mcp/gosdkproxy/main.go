// Command gosdkproxy is the MCP-aware Go baseline of the MCP benchmark: the
// aggregating proxy a Go user would write with the go-sdk. It is an
// mcp.Server behind mcp.NewStreamableHTTPHandler whose tools mirror the
// upstream's (listed once at start through an mcp.Client session), and
// every tools/call is forwarded through an mcp.ClientSession to the
// upstream.
//
// Each downstream session gets its own upstream client session, opened
// lazily on its first call and closed when the downstream session ends, so
// the upstream sees one session per caller as it would with no proxy in
// between. Both sides use application/json responses (JSONResponse), as
// the upstream does, and the client sessions open no standalone GET stream
// (DisableStandaloneSSE): the proxy forwards no server-initiated messages,
// so the stream would only hold a connection per session.
//
//	gosdkproxy -addr 127.0.0.1:7203 -upstream http://127.0.0.1:7200/mcp
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// proxy holds the upstream client and the upstream session of each
// downstream session.
type proxy struct {
	client    *mcp.Client
	transport func() mcp.Transport

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*upstreamSession
}

// upstreamSession is opened once (ready closes when cs or err is set).
type upstreamSession struct {
	ready chan struct{}
	cs    *mcp.ClientSession
	err   error
}

// session returns the upstream session for ss, connecting it on first use.
func (p *proxy) session(ctx context.Context, ss *mcp.ServerSession) (*mcp.ClientSession, error) {
	p.mu.Lock()
	u, ok := p.sessions[ss]
	if !ok {
		u = &upstreamSession{ready: make(chan struct{})}
		p.sessions[ss] = u
	}
	p.mu.Unlock()
	if ok {
		select {
		case <-u.ready:
			return u.cs, u.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	u.cs, u.err = p.client.Connect(context.WithoutCancel(ctx), p.transport(), nil)
	close(u.ready)
	if u.err != nil {
		p.mu.Lock()
		delete(p.sessions, ss)
		p.mu.Unlock()
		return nil, u.err
	}
	go func() {
		// The downstream session ended (DELETE, or the server closed it):
		// end the upstream one with it.
		_ = ss.Wait()
		p.mu.Lock()
		delete(p.sessions, ss)
		p.mu.Unlock()
		_ = u.cs.Close()
	}()
	return u.cs, nil
}

// forward is the handler of the mirrored tool name.
func (p *proxy) forward(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		cs, err := p.session(ctx, req.Session)
		if err != nil {
			return nil, fmt.Errorf("upstream session: %w", err)
		}
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: req.Params.Arguments})
	}
}

// listTools lists the upstream's tools, retrying while it starts.
func (p *proxy) listTools(ctx context.Context) ([]*mcp.Tool, error) {
	var err error
	for ctx.Err() == nil {
		var cs *mcp.ClientSession
		cs, err = p.client.Connect(ctx, p.transport(), nil)
		if err == nil {
			var tools []*mcp.Tool
			for tool, lerr := range cs.Tools(ctx, nil) {
				if lerr != nil {
					err = lerr
					break
				}
				tools = append(tools, tool)
			}
			_ = cs.Close()
			if err == nil {
				return tools, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:7203", "listen address (the endpoint is /mcp)")
	upstream := flag.String("upstream", "http://127.0.0.1:7200/mcp", "upstream MCP endpoint")
	conns := flag.Int("conns", 256, "idle keep-alive connections kept to the upstream")
	flag.Parse()

	// As in revproxy: the default Transport's 2 idle connections per host
	// would redial under load.
	httpClient := &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        *conns,
		MaxIdleConnsPerHost: *conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}}
	p := &proxy{
		client: mcp.NewClient(&mcp.Implementation{Name: "bench-gosdkproxy", Version: "1.0.0"}, nil),
		transport: func() mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: *upstream, HTTPClient: httpClient, DisableStandaloneSSE: true}
		},
		sessions: map[*mcp.ServerSession]*upstreamSession{},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	tools, err := p.listTools(ctx)
	cancel()
	if err != nil {
		log.Fatalf("gosdkproxy: list upstream tools: %v", err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "bench-gosdkproxy", Version: "1.0.0"}, nil)
	for _, tool := range tools {
		server.AddTool(tool, p.forward(tool.Name))
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{JSONResponse: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
