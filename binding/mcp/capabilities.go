package mcp

import (
	"strings"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// The capability bits by side: a lifecycle's BEGIN carries the client's
// (McpLifecycleBeginEx.capabilities), its reply the server's.
const (
	ServerCapabilities = McpCapabilitiesServerTools | McpCapabilitiesServerPrompts |
		McpCapabilitiesServerResources | McpCapabilitiesServerToolsListChanged |
		McpCapabilitiesServerPromptsListChanged | McpCapabilitiesServerResourcesListChanged |
		McpCapabilitiesServerResourcesSubscribe | McpCapabilitiesServerLogging |
		McpCapabilitiesServerCompletions | McpCapabilitiesServerExtensionUi
	ClientCapabilities = McpCapabilitiesClientRoots | McpCapabilitiesClientSampling |
		McpCapabilitiesClientElicitation | McpCapabilitiesClientElicitationForm |
		McpCapabilitiesClientElicitationUrl | McpCapabilitiesClientExtensionUi
	// ListChangedCapabilities are the list_changed notifications, as
	// server capabilities and as a lifecycle's subscriptions alike.
	ListChangedCapabilities = McpCapabilitiesServerToolsListChanged |
		McpCapabilitiesServerPromptsListChanged | McpCapabilitiesServerResourcesListChanged
)

// ClientRequestNeed returns the client capability that a request of
// method (ping, elicitation/create, sampling/createMessage or roots/list)
// from a server to its client needs: none for ping, elicitation in the
// mode the params name (form when they name none), sampling, roots. ok is
// false for another method, and for params (nil when absent) that are
// not an object or that name the mode twice (or in another case, which
// encoding/json reads as the mode) or as anything but "form" or "url": the
// gateway checks the client's capabilities against the mode it reads, so
// the client must not read another.
func ClientRequestNeed(method, params []byte) (need McpCapabilities, ok bool) {
	if params != nil && (len(params) == 0 || params[0] != '{') {
		return 0, false
	}
	switch string(method) {
	case "ping":
		return 0, true
	case "sampling/createMessage":
		return McpCapabilitiesClientSampling, true
	case "roots/list":
		return McpCapabilitiesClientRoots, true
	case "elicitation/create":
		mode, twice := jsonrpc.LookupUnique(params, "mode")
		if twice || foldedMember(params, "mode") {
			return 0, false
		}
		if mode == nil {
			return McpCapabilitiesClientElicitationForm, true
		}
		var buf [8]byte
		switch s, err := jsonrpc.UnquoteTo(buf[:0], mode); {
		case err != nil:
		case string(s) == "form":
			return McpCapabilitiesClientElicitationForm, true
		case string(s) == "url":
			return McpCapabilitiesClientElicitationUrl, true
		}
	}
	return 0, false
}

// foldedMember reports whether the object obj names a member name
// without regard to case but not exactly ("MODE" for mode): encoding/json
// by default (a Go peer that does not opt out, as go-sdk does) reads it
// into the field of that name, where other parsers do not.
func foldedMember(obj []byte, name string) bool {
	for f, i, ok := jsonrpc.NextField(obj, 0); ok; f, i, ok = jsonrpc.NextField(obj, i) {
		var buf [32]byte
		k, err := jsonrpc.UnquoteTo(buf[:0], f.Key)
		if err == nil && string(k) != name && strings.EqualFold(string(k), name) {
			return true
		}
	}
	return false
}

// member returns the raw value of the member name of the JSON object obj;
// ok is false when obj is not an object or has no such member.
func member(obj []byte, name string) (value []byte, ok bool) {
	v := jsonrpc.Lookup(obj, name)
	return v, v != nil
}

// serverMembers are the members of a server's capabilities object, each
// with the bit its presence stands for and the bits of its flags.
var serverMembers = [...]struct {
	name        string
	bit         McpCapabilities
	listChanged McpCapabilities // "listChanged":true
	subscribe   McpCapabilities // "subscribe":true
}{
	{"tools", McpCapabilitiesServerTools, McpCapabilitiesServerToolsListChanged, 0},
	{"prompts", McpCapabilitiesServerPrompts, McpCapabilitiesServerPromptsListChanged, 0},
	{"resources", McpCapabilitiesServerResources, McpCapabilitiesServerResourcesListChanged, McpCapabilitiesServerResourcesSubscribe},
	{"logging", McpCapabilitiesServerLogging, 0, 0},
	{"completions", McpCapabilitiesServerCompletions, 0, 0},
}

// The MCP Apps extension (SEP-1865, negotiated as SEP-2133 has
// extensions negotiated): its key under capabilities.extensions, and the
// mime type of its views, which a client that renders them lists.
const (
	ExtensionUI = "io.modelcontextprotocol/ui"
	MimeTypeApp = "text/html;profile=mcp-app"
)

// The capabilities of the MCP Apps extension the gateway declares for
// its side: a client that renders views, a server that has them. The
// gateway declares no extension it does not carry end to end: one that
// adds methods (tasks) would find no route for them.
const (
	clientExtensionUI = `"extensions":{"` + ExtensionUI + `":{"mimeTypes":["` + MimeTypeApp + `"]}}`
	serverExtensionUI = `"extensions":{"` + ExtensionUI + `":{}}`
)

// extensionUI returns the capabilities' MCP Apps object, nil when they
// declare none.
func extensionUI(caps []byte) []byte {
	ext, ok := member(caps, "extensions")
	if !ok {
		return nil
	}
	ui, ok := member(ext, ExtensionUI)
	if !ok || len(ui) == 0 || ui[0] != '{' {
		return nil
	}
	return ui
}

// rendersApps reports whether a client's MCP Apps object lists the mime
// type of views among its mimeTypes.
func rendersApps(ui []byte) bool {
	types, ok := member(ui, "mimeTypes")
	if !ok {
		return false
	}
	for v, i, ok := jsonrpc.NextElement(types, 0); ok; v, i, ok = jsonrpc.NextElement(types, i) {
		var buf [len(MimeTypeApp)]byte
		if s, err := jsonrpc.UnquoteTo(buf[:0], v); err == nil && string(s) == MimeTypeApp {
			return true
		}
	}
	return false
}

// ParseServerCapabilities returns the server bits of an initialize or
// server/discover result's capabilities object.
func ParseServerCapabilities(caps []byte) McpCapabilities {
	var bits McpCapabilities
	if extensionUI(caps) != nil {
		bits |= McpCapabilitiesServerExtensionUi
	}
	for _, m := range serverMembers {
		v, ok := member(caps, m.name)
		if !ok {
			continue
		}
		bits |= m.bit
		if m.listChanged != 0 && isTrue(member(v, "listChanged")) {
			bits |= m.listChanged
		}
		if m.subscribe != 0 && isTrue(member(v, "subscribe")) {
			bits |= m.subscribe
		}
	}
	return bits
}

// AppendServerCapabilities appends the capabilities object of the server
// bits in c. A member is present when any of its bits is set.
func AppendServerCapabilities(dst []byte, c McpCapabilities) []byte {
	dst = append(dst, '{')
	n := len(dst)
	for _, m := range serverMembers {
		if c&(m.bit|m.listChanged|m.subscribe) == 0 {
			continue
		}
		if len(dst) > n {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, m.name...)
		dst = append(dst, `":{`...)
		if c&m.subscribe != 0 {
			dst = append(dst, `"subscribe":true`...)
			if c&m.listChanged != 0 {
				dst = append(dst, ',')
			}
		}
		if c&m.listChanged != 0 {
			dst = append(dst, `"listChanged":true`...)
		}
		dst = append(dst, '}')
	}
	if c&McpCapabilitiesServerExtensionUi != 0 {
		if len(dst) > n {
			dst = append(dst, ',')
		}
		dst = append(dst, serverExtensionUI...)
	}
	return append(dst, '}')
}

// ParseClientCapabilities returns the client bits of an initialize's (or
// a 2026-07-28 _meta's) capabilities object. MCP.md §2.2: an elicitation
// object that names no mode means form mode.
func ParseClientCapabilities(caps []byte) McpCapabilities {
	var bits McpCapabilities
	if _, ok := member(caps, "roots"); ok {
		bits |= McpCapabilitiesClientRoots
	}
	if _, ok := member(caps, "sampling"); ok {
		bits |= McpCapabilitiesClientSampling
	}
	if e, ok := member(caps, "elicitation"); ok {
		bits |= McpCapabilitiesClientElicitation
		_, form := member(e, "form")
		_, url := member(e, "url")
		if form || !url {
			bits |= McpCapabilitiesClientElicitationForm
		}
		if url {
			bits |= McpCapabilitiesClientElicitationUrl
		}
	}
	if ui := extensionUI(caps); ui != nil && rendersApps(ui) {
		bits |= McpCapabilitiesClientExtensionUi
	}
	return bits
}

// AppendClientCapabilities appends the capabilities object of the client
// bits in c. What a client declares changes what servers list (MCP.md
// §1.6).
func AppendClientCapabilities(dst []byte, c McpCapabilities) []byte {
	dst = append(dst, '{')
	n := len(dst)
	if c&McpCapabilitiesClientRoots != 0 {
		dst = append(dst, `"roots":{"listChanged":true}`...)
	}
	if c&McpCapabilitiesClientSampling != 0 {
		if len(dst) > n {
			dst = append(dst, ',')
		}
		dst = append(dst, `"sampling":{}`...)
	}
	if c&(McpCapabilitiesClientElicitation|McpCapabilitiesClientElicitationForm|McpCapabilitiesClientElicitationUrl) != 0 {
		if len(dst) > n {
			dst = append(dst, ',')
		}
		dst = append(dst, `"elicitation":{`...)
		form := c&McpCapabilitiesClientElicitationForm != 0
		if form {
			dst = append(dst, `"form":{}`...)
		}
		if c&McpCapabilitiesClientElicitationUrl != 0 {
			if form {
				dst = append(dst, ',')
			}
			dst = append(dst, `"url":{}`...)
		}
		dst = append(dst, '}')
	}
	if c&McpCapabilitiesClientExtensionUi != 0 {
		if len(dst) > n {
			dst = append(dst, ',')
		}
		dst = append(dst, clientExtensionUI...)
	}
	return append(dst, '}')
}

func isTrue(v []byte, ok bool) bool { return ok && string(v) == "true" }

// ListChange is a list_changed notification under each of its names.
type ListChange struct {
	Bit    McpCapabilities // the server capability, and a lifecycle's subscription
	Flush  uint8           // the McpFlushEx kind that carries it on a lifecycle stream
	Method string          // the JSON-RPC notification
	Listen string          // its member of subscriptions/listen's notifications (2026-07-28)
}

var listChanges = [...]ListChange{
	{McpCapabilitiesServerToolsListChanged, McpFlushExKindToolsListChanged,
		"notifications/tools/list_changed", "toolsListChanged"},
	{McpCapabilitiesServerPromptsListChanged, McpFlushExKindPromptsListChanged,
		"notifications/prompts/list_changed", "promptsListChanged"},
	{McpCapabilitiesServerResourcesListChanged, McpFlushExKindResourcesListChanged,
		"notifications/resources/list_changed", "resourcesListChanged"},
}

// ListChanges returns the list_changed notifications, in a copy the
// caller may range over.
func ListChanges() [len(listChanges)]ListChange { return listChanges }
