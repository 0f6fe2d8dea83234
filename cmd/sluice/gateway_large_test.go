package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomText returns n characters of base64 from a seeded source, so that a
// failure can be replayed and nothing compresses it.
func randomText(seed uint64, n int) string {
	raw := make([]byte, n*3/4+3)
	r := rand.New(rand.NewPCG(seed, seed))
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	return base64.StdEncoding.EncodeToString(raw)[:n]
}

// nodeAndLocal starts server-everything and a gateway on two workers
// with routes node (it) and local (the toolkit), and returns the
// gateway's endpoint and the upstream.
func nodeAndLocal(t *testing.T) (string, *upstream) {
	t.Helper()
	nodeUp := startNodeEverything(t, 0)
	port := freePort(t)
	return startGateway(t, gatewayConfig(port, "",
		gatewayRoute{Toolkit: "node", Upstream: nodeUp.URL},
		gatewayRoute{Toolkit: "local", Upstream: ""}), port, 2), nodeUp
}

// sdkSession connects the Go SDK's client to endpoint at version, closed
// when the test ends.
func sdkSession(t *testing.T, ctx context.Context, endpoint, version string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "sluice-gateway-test", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = session.Close() })
	return session
}

// TestGatewayLargeMessages sends requests and answers of 100 KiB to 900 KiB
// through the whole gateway (tcp, http, mcp server, proxy, mcp client, http
// client) at both eras, with the Go SDK's client in front and
// server-everything behind: every byte comes back, across many
// flow-control windows each way. A request over the http server's
// 1 MiB body limit is refused, and the session goes on.
func TestGatewayLargeMessages(t *testing.T) {
	endpoint, _ := nodeAndLocal(t)

	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			session := sdkSession(t, ctx, endpoint, version)

			// The toolkit holds a call's params in one 32 KiB buffer slot, so
			// it takes 24 KiB: three of its 8 KiB windows.
			for i, call := range []struct {
				tool string
				size int
			}{{"node__echo", 100 << 10}, {"node__echo", 900 << 10}, {"local__echo", 24 << 10}} {
				tool, size := call.tool, call.size
				msg := randomText(uint64(i+1), size)
				{
					res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"message": msg}})
					require.NoError(t, err, "%s of %d bytes", tool, size)
					got := text(t, res)
					require.Equal(t, len("Echo: ")+size, len(got), "%s of %d bytes", tool, size)
					assert.True(t, got == "Echo: "+msg, "%s of %d bytes: every byte back", tool, size)
				}
			}

			// A 256 KiB file, gzipped upstream: random bytes do not compress,
			// so the answer carries about as much as the request.
			file := []byte(randomText(7, 256<<10))
			dataURI := "data:application/octet-stream;base64," + base64.StdEncoding.EncodeToString(file)
			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "node__gzip-file-as-resource",
				Arguments: map[string]any{"name": "big-" + version + ".gz", "data": dataURI, "outputType": "resource"}})
			require.NoError(t, err)
			require.False(t, res.IsError)
			require.Len(t, res.Content, 1)
			embedded, ok := res.Content[0].(*mcp.EmbeddedResource)
			require.True(t, ok, "an embedded resource, got %T", res.Content[0])
			assert.Equal(t, file, gunzip(t, embedded.Resource.Blob))
			assert.True(t, strings.HasPrefix(embedded.Resource.URI, "node+"), "the uri prefixed: %s", embedded.Resource.URI)

			if version == "2025-11-25" {
				// The session's resource, read back through its own upstream
				// session.
				read, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: embedded.Resource.URI})
				require.NoError(t, err)
				require.Len(t, read.Contents, 1)
				assert.Equal(t, file, gunzip(t, read.Contents[0].Blob))
			}

			if version == "2025-11-25" {
				// A request over the body limit gets 413 and loses the
				// session nothing: its next call is answered.
				tooBig := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"node__echo","arguments":{"message":"` +
					randomText(9, 1100<<10) + `"}}}`
				req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(tooBig))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Session-Id", session.ID())
				req.Header.Set("Mcp-Protocol-Version", version)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
				res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "node__echo", Arguments: map[string]any{"message": "after"}})
				require.NoError(t, err, "the session goes on after a refused request")
				assert.Equal(t, "Echo: after", text(t, res))
			}
		})
	}
}

// TestGatewayResourceLinks: the resource links and embedded resources an
// upstream's tools and prompts answer with reach the client with their
// route's prefix, so that reading one back through the gateway goes to
// the route that made it, at both eras.
func TestGatewayResourceLinks(t *testing.T) {
	endpoint, _ := nodeAndLocal(t)

	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			session := sdkSession(t, ctx, endpoint, version)

			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "node__get-resource-links", Arguments: map[string]any{"count": 4}})
			require.NoError(t, err)
			var links []*mcp.ResourceLink
			for _, c := range res.Content {
				if l, ok := c.(*mcp.ResourceLink); ok {
					links = append(links, l)
				}
			}
			require.Len(t, links, 4)
			for _, l := range links {
				require.True(t, strings.HasPrefix(l.URI, "node+demo://"), l.URI)
				read, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: l.URI})
				require.NoError(t, err, "reading %s back", l.URI)
				require.Len(t, read.Contents, 1)
				assert.Equal(t, l.URI, read.Contents[0].URI)
			}

			res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "node__get-resource-reference",
				Arguments: map[string]any{"resourceType": "Text", "resourceId": 3}})
			require.NoError(t, err)
			var embedded *mcp.EmbeddedResource
			for _, c := range res.Content {
				if e, ok := c.(*mcp.EmbeddedResource); ok {
					embedded = e
				}
			}
			require.NotNil(t, embedded)
			assert.True(t, strings.HasPrefix(embedded.Resource.URI, "node+demo://"), embedded.Resource.URI)
			read, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: embedded.Resource.URI})
			require.NoError(t, err)
			assert.Equal(t, embedded.Resource.URI, read.Contents[0].URI)
			assert.Equal(t, untimed(embedded.Resource.Text), untimed(read.Contents[0].Text))

			prompt, err := session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "node__resource-prompt",
				Arguments: map[string]string{"resourceType": "Blob", "resourceId": "5"}})
			require.NoError(t, err)
			var inPrompt *mcp.EmbeddedResource
			for _, m := range prompt.Messages {
				if e, ok := m.Content.(*mcp.EmbeddedResource); ok {
					inPrompt = e
				}
			}
			require.NotNil(t, inPrompt)
			assert.True(t, strings.HasPrefix(inPrompt.Resource.URI, "node+demo://"), inPrompt.Resource.URI)
			read, err = session.ReadResource(ctx, &mcp.ReadResourceParams{URI: inPrompt.Resource.URI})
			require.NoError(t, err)
			assert.Equal(t, inPrompt.Resource.URI, read.Contents[0].URI)
			assert.Equal(t, untimed(string(inPrompt.Resource.Blob)), untimed(string(read.Contents[0].Blob)))
		})
	}
}

// TestGatewayLargeResource reads a resource of 8 MiB through the gateway:
// server-everything gzips 6 MiB of random bytes it fetches from the test
// into a session resource, and the Go SDK's client reads its link back
// through the prefixed route. The read streams with the prefix put on
// its uri, so it is bounded by nothing the proxy holds.
func TestGatewayLargeResource(t *testing.T) {
	file := make([]byte, 6<<20)
	r := rand.New(rand.NewPCG(11, 11))
	for i := range file {
		file[i] = byte(r.Uint32())
	}
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(file)
	}))
	defer files.Close()
	endpoint, _ := nodeAndLocal(t)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	session := sdkSession(t, ctx, endpoint, "2025-11-25")

	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "node__gzip-file-as-resource",
		Arguments: map[string]any{"name": "big.gz", "data": files.URL + "/big", "outputType": "resourceLink"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	var link *mcp.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			link = l
		}
	}
	require.NotNil(t, link)
	read, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: link.URI})
	require.NoError(t, err)
	require.Len(t, read.Contents, 1)
	assert.Equal(t, link.URI, read.Contents[0].URI, "the prefix put back")
	assert.Greater(t, len(read.Contents[0].Blob), 6<<20, "random bytes do not compress: 8 MiB of base64 on the wire")
	assert.Equal(t, file, gunzip(t, read.Contents[0].Blob))
}

// untimed cuts server-everything's dynamic resource text before the time
// it was made ("… created at 7:15:33 PM"), which a second read may not
// share.
func untimed(s string) string {
	if i := strings.Index(s, " created at "); i >= 0 {
		return s[:i]
	}
	return s
}

func gunzip(t *testing.T, blob []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(blob))
	require.NoError(t, err)
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	return out
}
