// Package spec is the wire-order script language and its runners.
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
// # Running scripts
//
// [Run] (in tests) and [Play] play a set of scripts together: every stream
// of every script starts at once, and barriers order them, as under k3po.
// A [Setup] says where the streams go:
//
//   - [PeerToPeer]: the scripts play each other in memory; every connect
//     must be accepted by one of them. This proves a client.rpt and a
//     server.rpt agree.
//
//   - [Config]: an engine starts from a configuration. A script accepting
//     zilla://streams/<name> plays the external binding <name>, which the
//     configuration may name as an exit; a script connecting to
//     zilla://streams/<name> opens a stream into the configured binding.
//     Script frames are built as the engine's own and written into the
//     workers' rings, so the engine cannot tell a script from a binding.
//
//   - [Live]: tcp://host:port streams over real sockets, against a server
//     already running such as sluice start.
//
//     spec.Run(t, spec.Config("server.yaml", spec.Root("net", netDir), spec.Root("app", appDir)),
//     "net/tools.call/client", "app/tools.call/server")
//
// For a binding's tests, [Scenarios] lists the scenario folders of a side
// of its library, [RunPairs] plays every pair of a side peer to peer, and
// [RunServerScenarios] plays the whole library against its server kind.
//
// [Override] replaces a script property, as k3po's @ScriptProperty does,
// so one pair can be played peer to peer and, with its accept address
// moved, behind a binding. The sluice spec command runs the same from a
// shell.
//
// [Setting] sets an engine setting for a [Config] run, as Zilla's tests
// pin one with EngineRule.configure or @Configure, so that scripts can
// expect what the engine would otherwise choose at random; sluice spec
// --set name=value does the same. Names are Zilla's property names, with
// or without the zilla.binding. prefix (mcp.session.id); the engine
// refuses names no binding declares ([engine.Setting]), and warns of
// Zilla's settings that it accepts but no binding reads yet. Where Zilla's
// value names a Java supplier method (Class::method), Sluice takes what
// the method returns: a fixed id, ids separated by commas handed out in
// turn, or sequential. The README lists the settings.
//
// # Transport semantics
//
// zilla://streams/<name> follows Zilla's k3po transport. Options on the
// connect or accept: zilla:window (the credit granted, 65536 by default),
// zilla:padding (charged per DATA frame), zilla:budgetId,
// zilla:transmission ("duplex", "half-duplex" or "simplex"),
// zilla:update (when credit is granted back: "stream" as bytes are read,
// "proactive" as they arrive, "message" after each read, "handshake" only
// the initial window, "none" never unless `read option zilla:ack N`
// acknowledges N bytes), zilla:throttle ("stream" splits writes across the
// credit, "message" waits until a write fits one frame, "none" ignores
// credit), zilla:authorization (set on every frame sent, and required of
// the BEGIN an accept takes), zilla:affinity and zilla:capabilities
// ("CHALLENGE"). Other options fail as unsupported.
//
// A connect sends its BEGIN at connected and, in duplex, waits for the
// reply BEGIN; it grants the reply its window as soon as that BEGIN
// arrives. An accept takes the next connection at each accepted block,
// grants its window at connected, and defers its reply BEGIN in
// half-duplex until its first write, flush, advisory or close; so an
// advisory written before connected (`read advise zilla:challenge`) goes
// out before the WINDOW, the order of seed 000. Writes wait for credit;
// write option zilla:flags sets the next DATA's flags (a message split
// across the credit otherwise goes out INIT … FIN) and read option
// zilla:flags checks them. rejected answers the BEGIN with RESET and a
// connect expecting that says connect aborted.
//
// Reads match literals and expressions exactly, take [0..N] and
// [0..${len}] byte ranges and (byte|short|int|long:name) numbers into
// variables, and match /regex/ (Java syntax, with named groups captured)
// against the data that follows.
//
// tcp://host:port streams have no BEGIN, WINDOW or extensions: connected
// is the connection established, write close a half-close, write abort a
// reset, read closed end of stream.
//
// # Failures
//
// The first stream that fails ends the run with
// "file:line: expected …, observed …" and the script around that line with
// the line marked. The observed frame shows its type, the engine stream id
// when there is one, DATA flags other than INIT|FIN, the payload, and an
// extension decoded by the IDL type the script expected. Every wait is
// bounded; a deadline reads "file:line: timed out waiting for …".
package spec
