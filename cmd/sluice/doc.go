// Sluice runs the Sluice stream-frame engine from the command line.
//
// A configuration in Zilla's zilla.yaml shape names the bindings to run: a
// pipeline of bindings (tcp, http, mcp, …) that pass frames to each other
// through per-worker rings. With no configuration, start serves MCP on
// http://127.0.0.1:7114/mcp in front of the built-in toolkit (the embedded
// sluice.yaml).
//
// Usage:
//
//	sluice <command> [arguments]
//
// The commands are:
//
//	start     load a configuration and run the engine
//	validate  check a configuration and report every problem
//	spec      run wire-order scripts peer to peer, against a config or over tcp
//	version   print the sluice version
//
// Flags of start:
//
//	-c, --config path       configuration file (default: the embedded sluice.yaml)
//	-w, --workers n         number of workers (default: the CPUs this process may use)
//	-e, --engine-dir path   directory for the workers' ring files (default .sluice/engine)
//	    --idle-spin d       how long an idle worker polls before it sleeps (default 0)
//	    --drain-timeout d   how long SIGINT or SIGTERM lets requests in flight finish (default 30s)
//	    --cpuprofile file   write a CPU profile of the run to file
//
// On SIGINT or SIGTERM start drains: the tcp servers close their
// listeners, the http servers close idle connections, answer the requests
// under way with Connection: close and end the event streams GET requests
// hold open, and once every accepted connection is closed, or the drain
// timeout has passed, the engine stops and start exits 0. A second signal
// stops at once and start exits 1. Start logs each address it listens on.
//
// "sluice <command> -h" prints the flags of the other commands. Exit
// status is 0 on success, 1 when a command fails, and 2 on a usage error
// or a configuration that does not load.
package main
