// Package http is the vocabulary of the http binding type: the HTTP frame
// extensions, the type's registration and its options. The kinds are
// packages of their own, [github.com/sluicehq/sluice/binding/http/server]
// and [github.com/sluicehq/sluice/binding/http/client], and both sit on the
// HTTP/1.1 codec in binding/http/h1.
//
// The extensions are generated from idl/http.idl. Each starts with the
// core extension prefix (compositeId, typeId):
//
//   - [HttpBeginEx] carries a request's or a response's headers,
//     pseudo-headers first (:method, :scheme, :authority and :path, or
//     :status), then the fields with lower-case names.
//   - [HttpEndEx] carries the trailers, [HttpFlushEx] a push promise.
//   - [HttpResetEx] and [HttpChallengeEx] carry the headers of a refusal
//     (such as its :status) and of a challenge.
//
// [NextHeader] walks the headers of an extension without allocating.
// [Options] is what a binding's options decode to, for both kinds; each
// kind's package registers itself with [RegisterKind], giving the
// function that makes its handler for a worker from them.
//
// # Versions
//
// options.versions takes Zilla's values, http/1.1 and h2, but the kinds
// speak HTTP/1.1 only. A binding that lists h2 without http/1.1 is
// refused when the engine starts, naming HTTP/2 as not supported yet. One
// that lists both serves HTTP/1.1, which is what Zilla's negotiation
// leaves to a client that does not ask for more: the server answers an
// Upgrade: h2c request in HTTP/1.1 (RFC 9110 §7.8 lets it ignore the
// upgrade) and does not take prior-knowledge HTTP/2; the client sends
// HTTP/1.1. Zilla's requests (model validation) and overrides (header
// rewriting) load only to be reported as not supported yet.
//
// Building a request's BEGIN extension and reading it back:
//
//	var b http.HttpBeginExBuilder
//	b.Wrap(buf, 0, len(buf)).TypeID(httpTypeID)
//	h := b.Headers()
//	h.Item().Name(":method").Value("POST")
//	h.Item().Name(":path").Value("/mcp")
//	ex, err := b.Build()
//
//	var hd http.HttpHeader
//	for c := ex.Headers().Cursor(); http.NextHeader(&c, &hd); {
//		fmt.Printf("%s: %s\n", hd.Name(), hd.Value())
//	}
package http
