package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `Sluice is a zero-copy stream-frame engine and MCP gateway.

Usage:

	sluice <command> [arguments]

The commands are:

	start     load a configuration and run the engine
	validate  check a configuration and report every problem
	spec      run wire-order scripts peer to peer, against a config or over tcp
	version   print the sluice version

Run "sluice <command> -h" for the flags of a command.
`

// Exit statuses returned by run.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command named by args[0] with the remaining arguments and
// returns the process exit status. It writes only to stdout and stderr, so
// tests can drive the whole CLI in-process.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	case "start":
		return runStart(rest, stdout, stderr)
	case "validate":
		return runValidate(rest, stdout, stderr)
	case "spec":
		return runSpec(rest, stdout, stderr)
	case "version":
		return runVersion(rest, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "sluice: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
}
