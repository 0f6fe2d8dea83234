package main

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkElicitationRoundTrip measures a tools/call that asks its client
// one form elicitation (go-sdk everything-server's test_elicitation),
// directly and through the gateway, beside a plain call
// (test_simple_text) on the same path: the elicitation's added latency
// through the gateway is (gateway/elicit - gateway/simple) - (direct/elicit
// - direct/simple).
//
//	go test ./cmd/sluice -run '^$' -bench ElicitationRoundTrip -benchtime 300x
func BenchmarkElicitationRoundTrip(b *testing.B) {
	up := startGoEverything(b, 0, false)
	port := freePort(b)
	gw := startGateway(b, gatewayConfig(port, "never", gatewayRoute{Toolkit: "everything", Upstream: up.URL}), port, 2)
	for _, path := range []struct{ name, endpoint string }{{"direct", up.URL}, {"gateway", gw}} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1.0.0"}, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "bench"}}, nil
			},
		})
		session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: path.endpoint},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		for _, call := range []struct{ name, tool string }{{"simple", "test_simple_text"}, {"elicit", "test_elicitation"}} {
			b.Run(path.name+"/"+call.name, func(b *testing.B) {
				params := &mcp.CallToolParams{Name: call.tool, Arguments: map[string]any{"message": "bench"}}
				for b.Loop() {
					res, err := session.CallTool(ctx, params)
					if err != nil || res.IsError {
						b.Fatalf("%s: %v %v", call.tool, err, res)
					}
				}
			})
		}
		session.Close()
		cancel()
	}
}
