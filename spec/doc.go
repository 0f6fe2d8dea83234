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
// ("CHALLENGE"), and on a connect zilla:streamId (the initial stream id
// its BEGIN carries; against an engine it must be an id the engine could
// have allocated, since the id names the workers). Other options fail as
// unsupported.
//
// A connect sends its BEGIN at connected and, in duplex, waits for the
// reply BEGIN; it grants the reply its window as soon as that BEGIN
// arrives. k3po opens a connect as soon as its script starts; Sluice opens
// it at connected, at the first command before connected that acts on
// the stream (a read, a write, an expected advisory), or when its
// commands end, so that extensions and options written before connected
// still go on the BEGIN. The connects of a script open in script order,
// each once the one before it has opened or is waiting on a barrier, so an
// accept's blocks take them in the order k3po would send them; a
// `connect await` opens when its barrier is notified, in no fixed order
// with other connects whose barriers are notified at the same time. A
// `read zilla:begin.ext` before a connect's connected says what the reply
// BEGIN must carry, and is checked when that BEGIN arrives (at connected
// in duplex, later in half-duplex, at the latest when the stream's
// commands end). An accept takes the next connection at each accepted
// block, grants its window at connected, and defers its reply BEGIN in
// half-duplex until its first write, write flush, write abort or close;
// an advisory does not force it, and one written before connected
// (`read advise zilla:challenge`) goes out before the WINDOW, the order of
// seed 000. A rejected block checks its `read zilla:begin.ext` against the
// BEGIN before refusing it with RESET.
//
// `write flush` sends no frame, as in k3po's zilla transport: it forces
// out a deferred BEGIN and, when a `write zilla:data.ext` waits with no
// data to carry it, sends a DATA with a null payload and that extension.
// A FLUSH is written only by `write advise zilla:flush [ext]`, which does
// not force out a deferred BEGIN either: k3po sends it as it is, so a
// half-duplex accept can advise (an HTTP/2 push promise) before its reply
// begins. Against an engine, a FLUSH ahead of the BEGIN resets the stream.
//
// `write close` sends END and `write abort` ABORT on the write side; a
// `write abort` after the peer's RESET (or REDIRECT) sends nothing, its
// output being aborted already. `close` closes both sides as k3po's
// transport does: END on the write side unless it is already closed, and
// RESET on the read side unless END or ABORT has arrived there; `closed`
// waits until both sides are done. `connect abort` sends the connect's
// BEGIN (with its pending extension) and ABORT straight after, which is
// what k3po's transport does when a connect is canceled.
//
// `read advise zilla:redirect VALUE` answers the peer's BEGIN with a
// REDIRECT, whose affinity is VALUE when it is 8 bytes (a long such as
// 0x01L) and whose extension is the BEGIN's own; the read side is then
// done. `write advised zilla:redirect VALUE` expects that REDIRECT and
// matches its affinity as 8 big-endian bytes; the write side is then
// aborted. k3po's transport stores the long in the channel's native byte
// order on both sides, so the affinity on the wire is the same number.
//
// A stream takes in its peer's frames one at a time, in order, and a
// command waiting on them resumes at the first frame that satisfies it:
// a WINDOW ahead of a RESET releases a pending write before the RESET
// aborts the stream, as k3po's transport handles each frame as it comes.
//
// Barriers are shared by every script of a run. A Go test takes part in
// them with [Barriers] and [WithBarriers], as a k3po test calls
// notifyBarrier and awaitBarrier; `sluice spec --notify NAME` notifies a
// barrier as the run starts. Writes wait for credit;
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
