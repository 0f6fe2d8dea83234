// Package http is the home of the http binding. For now it holds the HTTP
// frame extensions, generated from idl/http.idl: [HttpBeginEx] carries the
// request or response headers (pseudo-headers :method, :scheme, :authority,
// :path and :status first), [HttpEndEx] the trailers, [HttpFlushEx] a push
// promise, and [HttpResetEx] and [HttpChallengeEx] headers for refusals and
// challenges. Each starts with the core extension prefix (compositeId,
// typeId).
//
//	var b http.HttpBeginExBuilder
//	b.Wrap(buf, 0, len(buf)).TypeID(httpTypeID)
//	h := b.Headers()
//	h.Item().Name(":method").Value("POST")
//	h.Item().Name(":path").Value("/mcp")
//	ex, err := b.Build()
package http
