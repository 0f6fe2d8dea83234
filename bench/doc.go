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
package bench
