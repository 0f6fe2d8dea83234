package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
)

const (
	tools       = mcp.McpCapabilitiesServerTools
	prompts     = mcp.McpCapabilitiesServerPrompts
	resources   = mcp.McpCapabilitiesServerResources
	toolsLC     = mcp.McpCapabilitiesServerToolsListChanged
	promptsLC   = mcp.McpCapabilitiesServerPromptsListChanged
	resourcesLC = mcp.McpCapabilitiesServerResourcesListChanged
	subscribe   = mcp.McpCapabilitiesServerResourcesSubscribe
	logging     = mcp.McpCapabilitiesServerLogging
	completions = mcp.McpCapabilitiesServerCompletions
	roots       = mcp.McpCapabilitiesClientRoots
	sampling    = mcp.McpCapabilitiesClientSampling
	elicit      = mcp.McpCapabilitiesClientElicitation
	elicitForm  = mcp.McpCapabilitiesClientElicitationForm
	elicitURL   = mcp.McpCapabilitiesClientElicitationUrl
	clientUI    = mcp.McpCapabilitiesClientExtensionUi
	serverUI    = mcp.McpCapabilitiesServerExtensionUi
)

func TestCapabilitySides(t *testing.T) {
	assert.Zero(t, mcp.ServerCapabilities&mcp.ClientCapabilities)
	var all mcp.McpCapabilities
	for b := mcp.McpCapabilities(1); b != 0; b <<= 1 {
		if b.Valid() {
			all |= b
		}
	}
	assert.Equal(t, all, mcp.ServerCapabilities|mcp.ClientCapabilities)
	assert.Equal(t, mcp.ListChangedCapabilities, mcp.ServerCapabilities&mcp.ListChangedCapabilities)
}

func TestServerCapabilities(t *testing.T) {
	for _, tt := range []struct {
		name string
		bits mcp.McpCapabilities
		json string
		back mcp.McpCapabilities // what the JSON parses back to
	}{
		{"none", 0, `{}`, 0},
		{"tools", tools, `{"tools":{}}`, tools},
		{"list changed alone", toolsLC, `{"tools":{"listChanged":true}}`, tools | toolsLC},
		{"all", mcp.ServerCapabilities,
			`{"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"logging":{},"completions":{},"extensions":{"io.modelcontextprotocol/ui":{}}}`,
			mcp.ServerCapabilities},
		{"apps", serverUI, `{"extensions":{"io.modelcontextprotocol/ui":{}}}`, serverUI},
		{"subscribe alone", subscribe, `{"resources":{"subscribe":true}}`, resources | subscribe},
		{"client bits ignored", roots | prompts, `{"prompts":{}}`, prompts},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := mcp.AppendServerCapabilities([]byte("x"), tt.bits)
			assert.Equal(t, "x"+tt.json, string(b))
			assert.Equal(t, tt.back, mcp.ParseServerCapabilities([]byte(tt.json)))
		})
	}
	for _, tt := range []struct {
		name, json string
		want       mcp.McpCapabilities
	}{
		{"not an object", `[]`, 0},
		{"flags false", `{"tools":{"listChanged":false},"resources":{"subscribe":"yes"}}`, tools | resources},
		{"unknown members", `{"experimental":{},"tasks":{}}`, 0},
		{"apps with settings", `{"tools":{},"extensions":{"io.modelcontextprotocol/ui":{"x":1},"io.modelcontextprotocol/tasks":{}}}`, tools | serverUI},
		{"apps not an object", `{"extensions":{"io.modelcontextprotocol/ui":true}}`, 0},
		{"other extensions", `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, mcp.ParseServerCapabilities([]byte(tt.json)))
		})
	}
}

// TestServerCapabilitiesRoundTrip checks every set of server bits: what is
// written parses back to the same bits or more (a flag implies its
// member), and writing that again changes nothing.
func TestServerCapabilitiesRoundTrip(t *testing.T) {
	for c := mcp.ServerCapabilities; ; c = (c - 1) & mcp.ServerCapabilities { // every subset
		j := mcp.AppendServerCapabilities(nil, c)
		require.True(t, json.Valid(j), "%s", j)
		back := mcp.ParseServerCapabilities(j)
		require.Equal(t, c, back&c, "%s", j)
		require.Equal(t, string(j), string(mcp.AppendServerCapabilities(nil, back)))
		if c == 0 {
			break
		}
	}
}

func TestClientCapabilities(t *testing.T) {
	for _, tt := range []struct {
		name string
		bits mcp.McpCapabilities
		json string
		back mcp.McpCapabilities
	}{
		{"none", 0, `{}`, 0},
		{"roots", roots, `{"roots":{"listChanged":true}}`, roots},
		{"sampling", sampling, `{"sampling":{}}`, sampling},
		{"elicitation without a mode is form", elicit, `{"elicitation":{}}`, elicit | elicitForm},
		{"url only", elicit | elicitURL, `{"elicitation":{"url":{}}}`, elicit | elicitURL},
		{"all", mcp.ClientCapabilities, `{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}},"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`,
			mcp.ClientCapabilities},
		{"apps", clientUI, `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`, clientUI},
		{"server bits ignored", tools | sampling | serverUI, `{"sampling":{}}`, sampling},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := mcp.AppendClientCapabilities([]byte("x"), tt.bits)
			assert.Equal(t, "x"+tt.json, string(b))
			assert.Equal(t, tt.back, mcp.ParseClientCapabilities([]byte(tt.json)))
		})
	}
	assert.Zero(t, mcp.ParseClientCapabilities([]byte(`"roots"`)))
	// A client renders views only when it lists their mime type.
	for json, want := range map[string]mcp.McpCapabilities{
		`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/plain","text\/html;profile=mcp-app"]}}}`: clientUI,
		`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html"]}}}`:                               0,
		`{"extensions":{"io.modelcontextprotocol/ui":{}}}`:                                                        0,
		`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":"text/html;profile=mcp-app"}}}`:                 0,
		`{"extensions":{"io.modelcontextprotocol/tasks":{"mimeTypes":["text/html;profile=mcp-app"]}}}`:            0,
	} {
		assert.Equal(t, want, mcp.ParseClientCapabilities([]byte(json)), json)
	}
}

func TestClientRequestNeed(t *testing.T) {
	for _, tt := range []struct {
		method, params string
		need           mcp.McpCapabilities
		ok             bool
	}{
		{"ping", "", 0, true},
		{"roots/list", "", roots, true},
		{"roots/list", `{}`, roots, true},
		{"sampling/createMessage", `{"messages":[],"maxTokens":1}`, sampling, true},
		{"elicitation/create", `{"message":"m","requestedSchema":{}}`, elicitForm, true},
		{"elicitation/create", `{"mode":"form"}`, elicitForm, true},
		{"elicitation/create", `{"mode":"url","url":"https://x.example/"}`, elicitURL, true},
		{"elicitation/create", `{"mode":"\u0075rl"}`, elicitURL, true}, // as the client decodes it
		{"elicitation/create", `{"m\u006fde":"url"}`, elicitURL, true},
		{"elicitation/create", `{"mode":"form","mode":"url"}`, 0, false}, // two readings
		{"elicitation/create", `{"mode":"url","m\u006fde":"url"}`, 0, false},
		{"elicitation/create", `{"mode":"sms"}`, 0, false},
		{"elicitation/create", `{"MODE":"url"}`, 0, false}, // encoding/json reads it as the mode
		{"elicitation/create", `{"mode":"form","Mode":"url"}`, 0, false},
		{"elicitation/create", `{"M\u004fDE":"url"}`, 0, false},
		{"elicitation/create", `{"model":"x"}`, elicitForm, true},
		{"elicitation/create", `{"mode":1}`, 0, false},
		{"elicitation/create", `{"mode":"urlurlurl"}`, 0, false},
		{"roots/list", `[]`, 0, false},
		{"sampling/createMessage", `5`, 0, false},
		{"elicitation/create", `null`, 0, false},
		{"tools/call", `{}`, 0, false},
	} {
		var params []byte
		if tt.params != "" {
			params = []byte(tt.params)
		}
		need, ok := mcp.ClientRequestNeed([]byte(tt.method), params)
		assert.Equal(t, tt.ok, ok, "%s %s", tt.method, tt.params)
		assert.Equal(t, tt.need, need, "%s %s", tt.method, tt.params)
	}
}

func TestCapabilitiesAllocs(t *testing.T) {
	dst := make([]byte, 0, 512)
	allocs := testing.AllocsPerRun(100, func() {
		dst = mcp.AppendServerCapabilities(dst[:0], mcp.ServerCapabilities)
		dst = mcp.AppendClientCapabilities(dst, mcp.ClientCapabilities)
	})
	assert.Zero(t, allocs)
}

func TestListChanges(t *testing.T) {
	var bits mcp.McpCapabilities
	for _, k := range mcp.ListChanges() {
		assert.Zero(t, bits&k.Bit, k.Method)
		bits |= k.Bit
		assert.True(t, strings.HasPrefix(k.Method, "notifications/") && strings.HasSuffix(k.Method, "/list_changed"), k.Method)
		assert.True(t, strings.HasSuffix(k.Listen, "ListChanged"), k.Listen)
		assert.Contains(t, []uint8{mcp.McpFlushExKindToolsListChanged, mcp.McpFlushExKindPromptsListChanged,
			mcp.McpFlushExKindResourcesListChanged}, k.Flush)
	}
	assert.Equal(t, mcp.ListChangedCapabilities, bits)
}
