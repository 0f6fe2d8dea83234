// Package guard is the Guard SPI, its registry, and the built-in test
// guard.
//
// A guard decides who may use a route. A binding hands it the credentials
// a request carries (a bearer token, say) and gets back a session id, which
// then travels in the authorization field of every frame of the stream;
// routes with a guarded: clause check the session's roles with
// [Handler.Verify]. The configuration names guards under guards.<name>
// with a type and options, as Zilla's does.
//
// # Concepts
//
//   - A [Guard] is the process-wide instance of one configured guard; a
//     [Handler] is one worker's view of it, obtained with [Guard.Attach]
//     and the worker's [Dispatcher].
//   - [Handler.Reauthorize] answers at once, without I/O, with a session
//     id, [NotAuthorized], or [NeedsPreauthorize]. [Authorized] tells a
//     session from the two sentinels. Every session must be released with
//     [Handler.Deauthorize] when the stream that acquired it ends.
//   - Sessions expire: [Handler.ExpiresAt] and [Handler.ExpiringAt] give
//     Unix-millisecond times ([ExpiresNever] for none), and
//     [Handler.Challenge] says when a binding should send CHALLENGE so the
//     client re-authorizes before expiry.
//   - [Handler.Preauthorize] is asynchronous and completes through the
//     Dispatcher with the URL a user must visit before credentials can be
//     accepted; the MCP server binding turns it into a URL-mode
//     elicitation. "" means no such step.
//
// Guard types register themselves from init with [Register], in the same
// shape as binding and store types; [Lookup] and [Types] read the
// registry.
//
// # The test guard
//
// The test type mirrors Zilla's engine test guard so specs written for
// Zilla configure it the same way:
//
//	guards:
//	  test0:
//	    type: test
//	    options:
//	      credentials: TOKEN        # the one credential string accepted
//	      lifetime: PT5S            # sessions expire 5s after authorization
//	      challenge: PT2S           # Challenge holds in the last 2s
//	      identity: alice           # default "test"
//	      roles: [read, write]      # Verify needs a subset; none = any
//	      attributes: {tenant: acme}
//	      preauthorize: https://auth.example.com/authorize
//	      acquire: deferred         # or immediate (default)
//	      max-sessions: 1           # further sessions are refused
//
// Durations are ISO-8601 ([ParseDuration]). Sessions are numbered from 1
// per guard and shared by all of its workers.
//
// # Usage
//
//	g, err := guard.New("test", "test0", options, nil)
//	if err != nil {
//		return err
//	}
//	defer g.Close()
//	h := g.Attach(worker) // worker implements Dispatcher
//	session := h.Reauthorize(traceID, bindingID, 0, token)
//	switch {
//	case guard.Authorized(session):
//		defer h.Deauthorize(session)
//	case session == guard.NeedsPreauthorize:
//		h.Preauthorize(traceID, bindingID, 0, 0, "", func(url string, err error) {
//			// runs on worker's thread: ask the user to visit url
//		})
//	}
package guard
