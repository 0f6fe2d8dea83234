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
// This package is being built up issue by issue; no harness exists yet.
package bench
