// Package spec is the wire-order script language and, in time, its
// runners.
//
// The language is the k3po .rpt dialect that Zilla's specs use, so a script
// written for Zilla reads the same against Sluice. A script says exactly
// which frames a peer writes and which it expects to read, in order;
// anything unexpected fails at a named line of the script.
//
// Scripts come in client.rpt and server.rpt pairs, one pair per scenario
// folder under scripts/ (see scripts/README.md). A client script that sends
// a message to an echo binding and reads it back:
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
// # Parsing
//
// [Parse] reads one script into a [Script]: its properties and its
// streams. A [Stream] is one connect or accept block, a [*Connect] or
// [*Accept] head with its options, and its commands ([Command]) in order; every node
// carries the [Pos] it was read at. Values that are written ([Value]:
// [*Text], [*Bytes], [*Number], [*Expression]) and operands of read
// ([Matcher]: those plus [*Regex], [*FixedBytes], [*VariableBytes] and
// [*NumberCapture]) are typed nodes too, and each ${…} holds a parsed
// [Expr] of the expression language, such as a multi-line
// ${mcp:beginEx().typeId(zilla:id("mcp"))….build()} builder ([ParseExpr]
// parses one on its own).
//
// The grammar is k3po's Robot.g4 as aklivity's k3po 3.4 has it, which is
// what Zilla's specs run on: whitespace and newlines only separate tokens,
// so a statement may run over several lines; # starts a comment; names in
// the zilla namespace (options, begin.ext and the other configs, the flush,
// challenge and redirect advisories) are checked against the zilla type
// system of Zilla's test transport, while other namespaces (http:, tls:)
// are kept unchecked for their transports. The expression language is the
// EL that k3po evaluates with JUEL.
//
// A script that does not parse gives an [ErrorList] whose error reads
// "file:line:col: expected …, found …". Parse stops at the first error, as
// k3po does, never panics, and caps how deeply expressions nest
// ([MaxExprNesting], [MaxExprChain]). A stray character that no token can
// begin is dropped with a warning in [Script.Warnings], as k3po's lexer
// drops it. [Excerpt] shows the source lines
// around a line with that line marked, for reporting a parse error now and
// a failed expectation later; [Script.String] prints a parsed script back
// in canonical form.
//
//	s, err := spec.Parse("client.rpt", src)
//	if err != nil {
//		var list spec.ErrorList
//		if errors.As(err, &list) {
//			fmt.Print(list[0], "\n", spec.Excerpt(src, list[0].Pos.Line, 2))
//		}
//		return err
//	}
//	for _, st := range s.Streams {
//		for _, cmd := range st.Commands {
//			switch c := cmd.(type) {
//			case *spec.WriteExt:
//				fmt.Println(c.Pos, "sets the", c.Kind, "extension")
//			case *spec.ReadAdvise:
//				fmt.Println(c.Pos, "sends", c.Kind)
//			}
//		}
//	}
//
// # Still to come
//
// This package is being built up issue by issue. Parsing is here; the
// evaluation of expressions (the zilla:, core:, http: and mcp: function
// libraries), the transport semantics of zilla:// and tcp://, and the
// runners (peer to peer in memory, driven against a running engine, and
// over real TCP against sluice start) arrive with their own issues.
package spec
