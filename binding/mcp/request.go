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
// false for a lifecycle or a kind the union does not know. A member
// without an ident leaves Ident null and ContentLength -1, their
// defaults.
func (r *RequestBegin) Read(ex *McpBeginEx) bool {
	*r = RequestBegin{ContentLength: -1, IdentNull: true}
	switch ex.Kind() {
	case McpBeginExKindToolsList:
		v := ex.ToolsList()
		r.SessionID, r.SessionIDNull, r.Timeout = v.SessionID(), !v.HasSessionID(), v.Timeout()
	case McpBeginExKindPromptsList:
		v := ex.PromptsList()
		r.SessionID, r.SessionIDNull, r.Timeout = v.SessionID(), !v.HasSessionID(), v.Timeout()
	case McpBeginExKindResourcesList:
		v := ex.ResourcesList()
		r.SessionID, r.SessionIDNull, r.Timeout = v.SessionID(), !v.HasSessionID(), v.Timeout()
	case McpBeginExKindResourcesTemplatesList:
		v := ex.ResourcesTemplatesList()
		r.SessionID, r.SessionIDNull, r.Timeout = v.SessionID(), !v.HasSessionID(), v.Timeout()
	case McpBeginExKindToolsCall:
		v := ex.ToolsCall()
		r.SessionID, r.SessionIDNull, r.Timeout = v.SessionID(), !v.HasSessionID(), v.Timeout()
		r.Ident, r.IdentNull, r.ContentLength = v.Name(), !v.HasName(), v.ContentLength()
	case McpBeginExKindPromptsGet:
		v := ex.PromptsGet()
		r.SessionID, r.SessionIDNull, r.Timeout = v.SessionID(), !v.HasSessionID(), v.Timeout()
		r.Ident, r.IdentNull, r.ContentLength = v.Name(), !v.HasName(), v.ContentLength()
	case McpBeginExKindResourcesRead:
		v := ex.ResourcesRead()
		r.SessionID, r.SessionIDNull, r.Timeout = v.SessionID(), !v.HasSessionID(), v.Timeout()
		r.Ident, r.IdentNull, r.ContentLength = v.URI(), !v.HasURI(), v.ContentLength()
	case McpBeginExKindResourcesSubscribe:
		v := ex.ResourcesSubscribe()
		r.SessionID, r.SessionIDNull, r.Timeout = v.SessionID(), !v.HasSessionID(), v.Timeout()
		r.Ident, r.IdentNull, r.ContentLength = v.URI(), !v.HasURI(), v.ContentLength()
	case McpBeginExKindResourcesUnsubscribe:
		v := ex.ResourcesUnsubscribe()
		r.SessionID, r.SessionIDNull, r.Timeout = v.SessionID(), !v.HasSessionID(), v.Timeout()
		r.Ident, r.IdentNull, r.ContentLength = v.URI(), !v.HasURI(), v.ContentLength()
	case McpBeginExKindRequest:
		v := ex.Request()
		r.SessionID, r.SessionIDNull, r.Timeout = v.SessionID(), !v.HasSessionID(), v.Timeout()
		r.Ident, r.IdentNull, r.ContentLength = v.Method(), !v.HasMethod(), v.ContentLength()
	default:
		return false
	}
	return true
}

// Build selects kind's member of b and writes r into it: the session id
// and timeout, and for a kind with an ident the ident and contentLength.
// It reports false, writing nothing, for a lifecycle or a kind the union
// does not know.
func (r *RequestBegin) Build(b *McpBeginExBuilder, kind uint8) bool {
	switch kind {
	case McpBeginExKindToolsList:
		SetSessionID(b.ToolsList(), r.SessionID, r.SessionIDNull).Timeout(r.Timeout)
	case McpBeginExKindPromptsList:
		SetSessionID(b.PromptsList(), r.SessionID, r.SessionIDNull).Timeout(r.Timeout)
	case McpBeginExKindResourcesList:
		SetSessionID(b.ResourcesList(), r.SessionID, r.SessionIDNull).Timeout(r.Timeout)
	case McpBeginExKindResourcesTemplatesList:
		SetSessionID(b.ResourcesTemplatesList(), r.SessionID, r.SessionIDNull).Timeout(r.Timeout)
	case McpBeginExKindToolsCall:
		SetName(SetSessionID(b.ToolsCall(), r.SessionID, r.SessionIDNull), r.Ident, r.IdentNull).
			ContentLength(r.ContentLength).Timeout(r.Timeout)
	case McpBeginExKindPromptsGet:
		SetName(SetSessionID(b.PromptsGet(), r.SessionID, r.SessionIDNull), r.Ident, r.IdentNull).
			ContentLength(r.ContentLength).Timeout(r.Timeout)
	case McpBeginExKindResourcesRead:
		SetURI(SetSessionID(b.ResourcesRead(), r.SessionID, r.SessionIDNull), r.Ident, r.IdentNull).
			ContentLength(r.ContentLength).Timeout(r.Timeout)
	case McpBeginExKindResourcesSubscribe:
		SetURI(SetSessionID(b.ResourcesSubscribe(), r.SessionID, r.SessionIDNull), r.Ident, r.IdentNull).
			ContentLength(r.ContentLength).Timeout(r.Timeout)
	case McpBeginExKindResourcesUnsubscribe:
		SetURI(SetSessionID(b.ResourcesUnsubscribe(), r.SessionID, r.SessionIDNull), r.Ident, r.IdentNull).
			ContentLength(r.ContentLength).Timeout(r.Timeout)
	case McpBeginExKindRequest:
		SetMethod(SetSessionID(b.Request(), r.SessionID, r.SessionIDNull), r.Ident, r.IdentNull).
			ContentLength(r.ContentLength).Timeout(r.Timeout)
	default:
		return false
	}
	return true
}

// BuildReply writes into b the McpBeginEx that answers the request ex:
// its kind, session id and ident, with contentLength unknown and no
// timeout; a lifecycle's carries caps. It reports false for a kind the
// union does not know.
func BuildReply(b *McpBeginExBuilder, ex *McpBeginEx, caps uint16) bool {
	if ex.Kind() == McpBeginExKindLifecycle {
		v := ex.Lifecycle()
		SetSessionID(b.Lifecycle(), v.SessionID(), !v.HasSessionID()).Capabilities(caps)
		return true
	}
	var r RequestBegin
	if !r.Read(ex) {
		return false
	}
	r.ContentLength, r.Timeout = -1, 0
	return r.Build(b, ex.Kind())
}
