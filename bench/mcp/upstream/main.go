// Command upstream is the MCP server every run of the MCP benchmark ends
// at: a go-sdk server with two tools, echo {text} → text and add {a, b} →
// a+b, over Streamable HTTP with stateful sessions.
//
// It answers requests with application/json rather than an SSE stream
// (StreamableHTTPOptions.JSONResponse): the tools send no progress or
// server→client requests, so one JSON object is all a response needs, and
// the benchmark then measures the proxies rather than SSE framing. The load
// generator handles both content types all the same.
//
//	upstream -addr 127.0.0.1:7200    # serves http://127.0.0.1:7200/mcp
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to return"`
}

type addArgs struct {
	A float64 `json:"a" jsonschema:"the first addend"`
	B float64 `json:"b" jsonschema:"the second addend"`
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-upstream", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text argument."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(in.A + in.B)}}}, nil, nil
		})
	return s
}

func main() {
	addr := flag.String("addr", "127.0.0.1:7200", "listen address (the endpoint is /mcp)")
	flag.Parse()
	server := newServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{JSONResponse: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
