package mcp

// RequestBegin holds the fields the request members of McpBeginEx share,
// so that code reading or writing any request kind does it once rather
// than once per member. Every request member has a session id and a
// timeout; the members that name a target (tools/call, prompts/get, the
// resources/read, subscribe and unsubscribe uri, the generic request's
// method) also have that ident and a contentLength. The slices alias the
// extension read.
type RequestBegin struct {
	SessionID     []byte
	Ident         []byte
	ContentLength int32
	Timeout       int64
	SessionIDNull bool
	IdentNull     bool
}

// Read fills r from ex's request member and reports whether ex has one:
// false for a lifecycle, a client response or a kind the union does not
// know (the request members are the ones with a timeout). A member without
// an ident leaves Ident null and ContentLength -1, their defaults.
func (r *RequestBegin) Read(ex *McpBeginEx) bool {
	kind := ex.Kind()
	if !McpBeginExHasTimeout(kind) {
		return false
	}
	var s McpBeginExShared
	ex.ReadShared(&s)
	*r = RequestBegin{SessionID: s.SessionID, SessionIDNull: s.SessionID == nil, Timeout: s.Timeout, ContentLength: -1, IdentNull: true}
	switch {
	case McpBeginExHasName(kind):
		r.Ident = s.Name
	case McpBeginExHasURI(kind):
		r.Ident = s.URI
	case kind == McpBeginExKindRequest:
		v := ex.Request()
		r.Ident = v.Method()
	default:
		return true
	}
	r.IdentNull, r.ContentLength = r.Ident == nil, s.ContentLength
	return true
}

// Build selects kind's member of b and writes r into it: the session id
// and timeout, and for a kind with an ident the ident and contentLength.
// It reports false, writing nothing, for a lifecycle, a client response or
// a kind the union does not know.
func (r *RequestBegin) Build(b *McpBeginExBuilder, kind uint8) bool {
	if !McpBeginExHasTimeout(kind) {
		return false
	}
	if kind == McpBeginExKindRequest {
		// Only the generic request has a method, so the union has no
		// setter for it: write through the member's builder.
		rb := SetSessionID(b.Request(), r.SessionID, r.SessionIDNull)
		SetString(rb.MethodBytes, rb.MethodNull, r.Ident, r.IdentNull)
	} else {
		SetSessionID(b.Case(kind), r.SessionID, r.SessionIDNull)
		if McpBeginExHasName(kind) {
			SetString(b.NameBytes, b.NameNull, r.Ident, r.IdentNull)
		} else if McpBeginExHasURI(kind) {
			SetString(b.URIBytes, b.URINull, r.Ident, r.IdentNull)
		}
	}
	if McpBeginExHasContentLength(kind) {
		b.ContentLength(r.ContentLength)
	}
	b.Timeout(r.Timeout)
	return true
}

// BuildReply writes into b the McpBeginEx that answers the request ex:
// its kind, session id and ident, with contentLength unknown and no
// timeout; a lifecycle's carries caps. It reports false for a kind the
// union does not know or a client response.
func BuildReply(b *McpBeginExBuilder, ex *McpBeginEx, caps uint16) bool {
	if ex.Kind() == McpBeginExKindLifecycle {
		sid := ex.SessionID()
		SetSessionID(b.Lifecycle(), sid, sid == nil).Capabilities(caps)
		return true
	}
	var r RequestBegin
	if !r.Read(ex) {
		return false
	}
	r.ContentLength, r.Timeout = -1, 0
	return r.Build(b, ex.Kind())
}
