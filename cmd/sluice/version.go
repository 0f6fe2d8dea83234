package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "usage: sluice version\n")
		return exitUsage
	}
	fmt.Fprintf(stdout, "sluice %s\n", version(debug.ReadBuildInfo()))
	return exitOK
}

// version returns the main module's version from the build info, or "devel"
// when the binary carries none (go run, go build without VCS stamping, tests).
func version(info *debug.BuildInfo, ok bool) string {
	if !ok || info.Main.Version == "" || info.Main.Version == "(devel)" {
		return "devel"
	}
	return info.Main.Version
}
