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
// [Env] evaluates expressions. Besides the builders and matchers derived
// from the IDL (mcp:beginEx(), http:matchBeginEx(), …), it has the
// functions and methods of Zilla's function classes that scripts use:
// core:randomBase64 (seeded by its length as Zilla's, so both peers
// compute the same text), core:capabilities, http:encodeQuery, the proxy
// address and info helpers, mcp lifecycle capabilities("A", "B", …), and
// <singular>Missing(…) on every matcher (headerMissing). On a string, the
// Java String methods JUEL would invoke: concat, formatted (String.format's
// common conversions), length, isEmpty, substring, replace, toUpperCase,
// toLowerCase, trim, startsWith, endsWith, contains, equals, indexOf,
// repeat, getBytes and toString. Other Java methods (split, charAt, …)
// fail as unknown rather than run with guessed semantics.
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
//     Zilla lets an exit name any binding; Sluice's loader insists that
//     it exists, so an exit to a peer no script accepts is declared with
//     [External] (sluice spec --external), as Zilla's tests declare theirs
//     with EngineRule.external; streams routed to it are refused. The run
//     also resolves ${{ test.… }} as Zilla's test engine does.
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
// # The http:// transport
//
// http://host:port/path streams follow k3po's http transport: they run
// on the transport that option http:transport names (tcp://host:port by
// default) and take the zilla: options for it. A connect opens a
// transport stream and is one request and its response; an accept takes
// each request of each transport connection, in turn, as an accepted
// block, keep-alive included (several accepts on one transport share it
// by longest path prefix). write http:method, http:version, http:header,
// http:host (Host set to the address's authority), http:status,
// http:trailer and http:content-length set the outgoing head, which goes
// out, as k3po sends it, with the first content, write flush or write
// close: the request line in origin-form when a Host header is set,
// absolute-form otherwise (GET and HTTP/1.1 by default; 200 OK for a
// response); headers in the order written; content as is after a
// Content-Length, as chunks with Transfer-Encoding: chunked (the last
// chunk and trailers at close), after the head for an Upgrade request or
// a 101, and otherwise buffered with http:content-length, the computed
// Content-Length set last. Without any of these, content fails, and a
// bodiless request other than GET or HEAD needs one too. The peer's head
// is parsed with binding/http/h1 and matched by read http:method,
// http:version, http:status (code and reason, from their start),
// http:header (names in any case; a single value must match whole, among
// several the first match is taken, and "missing" checks there is none)
// and http:trailer (at the end of the message); regex groups are
// captured as strings. The body arrives as DATA and its end as read
// closed; write close ends the message (and the transport, after a
// response with Connection: close or an upgrade); write abort and read
// abort send the transport's ABORT and RESET, and read aborted and write
// aborted expect them from the peer. Sluice differs from k3po on
// purpose where k3po would hang or race: a read http:… on a connect
// first sends a request still held back; response content shorter than a
// Content-Length the script set is streamed rather than buffered; when
// the peer ends the transport between messages, Sluice ends its side
// once every message it writes is out, where k3po aborts at once; and
// write close on an upgraded connect ends the transport. Requests that
// Netty reads and h1 refuses are read as Netty does: a later HTTP/1.x
// version, absolute-form without Host, a transfer coding other than
// chunked (no body).
//
// # Failures
//
// The first stream that fails ends the run with
// "file:line: expected …, observed …" and the script around that line with
// the line marked. The observed frame shows its type, the engine stream id
// when there is one, DATA flags other than INIT|FIN, the payload, and an
// extension decoded by the IDL type the script expected. An expected
// extension given as a built value (${http:beginEx()….build()}) that
// differs is decoded as the builder's type too, and the failure names the
// first field that differs: (HttpBeginEx.headers[2].name: expected
// ":path", observed ":authority"). Every wait is
// bounded; a deadline reads "file:line: timed out waiting for …".
package spec
