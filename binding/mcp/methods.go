package mcp

// Param is what a method's params must name for its BEGIN extension to
// carry it.
type Param uint8

// The params a request kind's BEGIN extension carries.
const (
	ParamNone Param = iota
	ParamName       // params.name: tools/call, prompts/get
	ParamURI        // params.uri: resources/read, subscribe, unsubscribe
)

// Method is a JSON-RPC request method that opens an application stream,
// and the McpBeginEx kind that carries it (MCP schema; ZILLA.md §6).
type Method struct {
	Name  string
	Kind  uint8 // McpBeginExKind…
	Param Param
	List  bool // paginated: params.cursor is a string
	// V20260728 is false for the methods 2026-07-28 removed (MCP.md §3.4).
	V20260728 bool
	// Need is the server capability the method needs, or 0. The generic
	// kind's methods are forwarded only to an application that declared
	// it.
	Need McpCapabilities
}

// methods are the methods with a request kind. The generic kind,
// McpBeginExKindRequest, carries the method's name in the extension.
var methods = [...]Method{
	{"tools/list", McpBeginExKindToolsList, ParamNone, true, true, 0},
	{"tools/call", McpBeginExKindToolsCall, ParamName, false, true, 0},
	{"prompts/list", McpBeginExKindPromptsList, ParamNone, true, true, 0},
	{"prompts/get", McpBeginExKindPromptsGet, ParamName, false, true, 0},
	{"resources/list", McpBeginExKindResourcesList, ParamNone, true, true, 0},
	{"resources/templates/list", McpBeginExKindResourcesTemplatesList, ParamNone, true, true, 0},
	{"resources/read", McpBeginExKindResourcesRead, ParamURI, false, true, 0},
	{"resources/subscribe", McpBeginExKindResourcesSubscribe, ParamURI, false, false, 0},
	{"resources/unsubscribe", McpBeginExKindResourcesUnsubscribe, ParamURI, false, false, 0},
	{"completion/complete", McpBeginExKindRequest, ParamNone, false, true, McpCapabilitiesServerCompletions},
	{"logging/setLevel", McpBeginExKindRequest, ParamNone, false, false, McpCapabilitiesServerLogging},
}

// kindMethods indexes methods by request kind; KindMethod answers for the
// lifecycle's entry, 0, itself.
var kindMethods = func() (t [McpBeginExKindRequest]uint8) {
	for i, m := range methods {
		if m.Kind != McpBeginExKindRequest {
			t[m.Kind] = uint8(i)
		}
	}
	return t
}()

// LookupMethod returns the method named name, or nil for a method without
// a request kind (initialize, ping, notifications, …). The Method is the
// table's own: do not modify it. It is a pointer rather than a copy
// because the server looks a method up per request, and a copy would cost
// more than the search.
func LookupMethod(name []byte) *Method {
	for i := range methods {
		if string(name) == methods[i].Name {
			return &methods[i]
		}
	}
	return nil
}

// KindMethod returns the method of a request kind, or nil for the
// lifecycle, the generic kind (whose extension names its method) and
// unknown kinds. The Method is the table's own: do not modify it.
func KindMethod(kind uint8) *Method {
	if kind == McpBeginExKindLifecycle || kind >= McpBeginExKindRequest {
		return nil
	}
	return &methods[kindMethods[kind]]
}

// CodeResourceNotFound is the JSON-RPC error code MCP gives a
// resources/read of a uri the server does not have.
const CodeResourceNotFound int32 = -32002
