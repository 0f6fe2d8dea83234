package main

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestGatewayResourceSubscriptions: go-sdk's client at 2026-07-28
// subscribes to a resource with subscriptions/listen
// (resourceSubscriptions), one listen per uri, through the gateway to
// go-sdk's everything-server, whose watched resource changes every 3 s:
// run stateless, which the client kind uses at 2026-07-28 (its own listen
// upstream), and run stateful at 2025-11-25 (resources/subscribe in an
// upstream session of the listen's own). The updates of both reach the
// client, under the gateway's uris.
func TestGatewayResourceSubscriptions(t *testing.T) {
	stateless := startGoEverything(t, 0, true)
	stateful := startGoEverything(t, 0, false)
	port := freePort(t)
	endpoint := startGateway(t, gatewayConfig(port, "",
		gatewayRoute{Toolkit: "modern", Upstream: stateless.URL, Versions: "[2026-07-28, 2025-11-25]"},
		gatewayRoute{Toolkit: "legacy", Upstream: stateful.URL}), port, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	updates := make(chan string, 64)
	client := mcp.NewClient(&mcp.Implementation{Name: "sluice-listen-test", Version: "1.0.0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case updates <- req.Params.URI:
			default:
			}
		},
	})
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	require.NoError(t, err)
	defer session.Close()

	uris := []string{"modern+test://watched-resource", "legacy+test://watched-resource"}
	for _, uri := range uris {
		// At 2026-07-28 Subscribe returns once the listen is acknowledged,
		// which holds it open in the background until Unsubscribe.
		require.NoError(t, session.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}))
	}
	seen := map[string]bool{}
	for len(seen) < len(uris) {
		select {
		case uri := <-updates:
			require.Contains(t, uris, uri)
			seen[uri] = true
		case <-ctx.Done():
			t.Fatalf("updates seen: %v", seen)
		}
	}
	for _, uri := range uris {
		require.NoError(t, session.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}))
	}
}
