// Package bench holds the end-to-end benchmark harnesses.
//
// A harness starts a pipeline (for example an MCP gateway in front of a test
// upstream), drives load through it from the outside, and reports
// throughput, latency and allocations, with comparable gateways measured
// side by side under the same load. Micro-benchmarks of one component live
// beside that component instead.
//
// Run every benchmark in the module with:
//
//	make bench
//
// Harnesses:
//
//   - bench/http/run.sh: wrk, 64 connections, against sluice start with
//     examples/http-echo.yaml on one worker and against Go's net/http
//     (bench/http/netserver) with GOMAXPROCS=1; it reports requests/s and
//     each server's CPU seconds per 100k requests.
//   - bench/mcp/run.sh: MCP tools/call and tools/list through sluice start
//     (bench/mcp/gateway.yaml, one worker), httputil.ReverseProxy and a
//     go-sdk proxy, and directly, in front of one go-sdk upstream, driven
//     by a session-aware raw-socket load generator; the proxy alone on
//     CPU 1, load and upstream on CPU 0. It reports requests/s, latency,
//     each process's CPU µs per request and CPU headroom, and checks
//     sluice against ReverseProxy (bench/mcp/README.md); target cached
//     compares a tools/list served from the proxy's cache with the
//     fanned-out one.
//   - bench/soak (make soak, not part of make test): the hardening attacks
//     of issue 30 against sluice start with a gateway config, one row per
//     attack: whether its expectation held, whether the gateway kept
//     serving, its RSS and open fds (bench/soak/README.md).
package bench
