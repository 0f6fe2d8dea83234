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
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
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

// The tools' input schemas, as jsonschema-go infers them from echoArgs and
// addArgs for mcp.AddTool; the raw handlers (-tools raw) declare them as is.
const (
	echoSchema = `{"type":"object","properties":{"text":{"type":"string","description":"the text to return"}},"required":["text"],"additionalProperties":false}`
	addSchema  = `{"type":"object","properties":{"a":{"type":"number","description":"the first addend"},"b":{"type":"number","description":"the second addend"}},"required":["a","b"],"additionalProperties":false}`
)

func newServer(tools string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-upstream", Version: "1.0.0"}, nil)
	if tools == "raw" {
		addRawTools(s)
		return s
	}
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

// addRawTools registers the same two tools with Server.AddTool: the
// handler gets the arguments as json.RawMessage and decodes them itself,
// with encoding/json, instead of the go-sdk's schema validation, defaults
// and re-encoding that mcp.AddTool performs on every call.
func addRawTools(s *mcp.Server) {
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Returns its text argument.", InputSchema: json.RawMessage(echoSchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Text *string `json:"text"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || in.Text == nil {
				return toolError("echo wants {\"text\": string}"), nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: *in.Text}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "add", Description: "Adds two numbers.", InputSchema: json.RawMessage(addSchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				A *float64 `json:"a"`
				B *float64 `json:"b"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || in.A == nil || in.B == nil {
				return toolError("add wants {\"a\": number, \"b\": number}"), nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(*in.A + *in.B)}}}, nil
		})
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:7200", "listen address (the endpoint is /mcp)")
	stateless := flag.Bool("stateless", false, "StreamableHTTPOptions.Stateless: no sessions, 2026-07-28 offered")
	jsonResponse := flag.Bool("json", true, "StreamableHTTPOptions.JSONResponse: application/json rather than SSE")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file until SIGINT or SIGTERM")
	tools := flag.String("tools", "raw", "raw: Server.AddTool, the handlers decode their arguments; typed: mcp.AddTool (schema validation on every call)")
	flag.Parse()
	if *tools != "typed" && *tools != "raw" {
		log.Fatalf("upstream: -tools must be typed or raw, got %q", *tools)
	}
	if *cpuprofile != "" {
		stop, err := profile(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		defer stop()
	}
	server := newServer(*tools)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{JSONResponse: *jsonResponse, Stateless: *stateless})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		log.Print(err)
	}
}

// profile starts a CPU profile into file; stop writes it.
func profile(file string) (stop func(), err error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
