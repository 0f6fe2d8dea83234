// Sluice runs the Sluice stream-frame engine from the command line.
//
// A configuration in Zilla's zilla.yaml shape names the bindings to run: a
// pipeline of bindings (tcp, http, mcp, …) that pass frames to each other
// through per-worker rings. The engine that runs them is not built yet, so
// start loads and checks the configuration and reports that no bindings run.
//
// Usage:
//
//	sluice <command> [arguments]
//
// The commands are:
//
//	start    load a configuration and run the engine
//	version  print the sluice version
//
// Flags of start:
//
//	-c, --config path       configuration file (default: the embedded sluice.yaml)
//	-w, --workers n         number of workers (default: the number of CPUs)
//	-e, --engine-dir path   directory for the workers' ring files (default .sluice/engine)
//
// Exit status is 0 on success, 1 when a command fails and 2 on a usage error.
package main
