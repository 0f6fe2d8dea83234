// Package mcp is the MCP gateway benchmark: Sluice side by side with Go's
// httputil.ReverseProxy and a go-sdk proxy, in front of the same go-sdk
// upstream, driven by the same session-aware load generator.
//
// The programs, each a main package here:
//
//   - upstream: the go-sdk MCP server every run ends at (echo and add).
//   - load: the load generator (sessions, tools/call or tools/list,
//     requests/s, latency quantiles, CPU per request of given processes):
//     by default one epoll loop over raw sockets with prebuilt requests,
//     so that it costs little CPU beside the upstream.
//   - revproxy: httputil.ReverseProxy, the MCP-unaware baseline.
//   - gosdkproxy: a go-sdk server forwarding through go-sdk client
//     sessions, the MCP-aware Go baseline.
//
// gateway.yaml and gateway-list.yaml are Sluice's configurations. run.sh
// builds everything and measures every target in one run; make bench
// calls it. This package holds only the smoke test, which checks the load
// generator against the upstream (JSON and SSE) directly and through
// revproxy:
//
//	go test ./bench/mcp/
//	bench/mcp/run.sh
//
// README.md explains the measurement.
package mcp
