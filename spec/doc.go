// Package spec is the wire-order script language and its runners.
//
// The language is the k3po .rpt dialect that Zilla's specs use, so a script
// written for Zilla reads the same against Sluice. A script says exactly
// which frames a peer writes and which it expects to read, in order;
// anything unexpected fails at a named line of the script.
//
// Scripts come in client.rpt and server.rpt pairs, one pair per scenario
// folder under scripts/ (see scripts/README.md). A pair can run three ways:
// peer to peer in memory, which proves the two scripts agree; driven against
// a running engine loaded with a configuration, the script playing an
// outside peer on the engine's rings; and over real TCP against sluice start.
//
// A client script that sends a message to an echo binding and reads it back:
//
//	connect "zilla://streams/echo0"
//	    option zilla:window 8192
//	    option zilla:transmission "duplex"
//	connected
//	write "hello"
//	read "hello"
//	write close
//	read closed
//
// This package is being built up issue by issue; the parser and the runners
// arrive with their own issues.
package spec
