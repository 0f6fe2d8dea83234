package toolkit_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/toolkit"
)

const (
	toolsCall   = mcp.McpBeginExKindToolsCall
	promptsGet  = mcp.McpBeginExKindPromptsGet
	readRes     = mcp.McpBeginExKindResourcesRead
	toolsList   = mcp.McpBeginExKindToolsList
	subscribe   = mcp.McpBeginExKindResourcesSubscribe
	unsubscribe = mcp.McpBeginExKindResourcesUnsubscribe
)

func text(s string) string { return `{"content":[{"type":"text","text":"` + s + `"}]}` }

func invalid(msg string) string { return `{"code":-32602,"message":"` + msg + `"}` }

// TestAnswer pins the toolkit's answers, argument validation above all:
// every bad or missing argument is -32602 with a message that says what
// is wrong.
func TestAnswer(t *testing.T) {
	tests := []struct {
		name   string
		kind   uint8
		ident  string // "" for none (nil)
		params string
		want   string
		isErr  bool
	}{
		{name: "echo", kind: toolsCall, ident: "echo", params: `{"name":"echo","arguments":{"message":"hi"}}`, want: text("Echo: hi")},
		{name: "echo escapes", kind: toolsCall, ident: "echo", params: `{"arguments":{"message":"a \"q\" \\ \n\u0001é"}}`,
			want: text(`Echo: a \"q\" \\ \n\u0001é`)},
		{name: "echo name from params", kind: toolsCall, params: `{"name":"echo","arguments":{"message":"hi"}}`, want: text("Echo: hi")},
		{name: "echo without arguments", kind: toolsCall, ident: "echo", params: `{"name":"echo"}`,
			want: invalid("Invalid arguments for tool echo: message must be a string"), isErr: true},
		{name: "echo number message", kind: toolsCall, ident: "echo", params: `{"arguments":{"message":5}}`,
			want: invalid("Invalid arguments for tool echo: message must be a string"), isErr: true},
		{name: "echo arguments not an object", kind: toolsCall, ident: "echo", params: `{"arguments":["hi"]}`,
			want: invalid("Invalid arguments for tool echo: arguments must be an object"), isErr: true},
		{name: "add integers", kind: toolsCall, ident: "add", params: `{"arguments":{"a":2,"b":3}}`, want: text("The sum of 2 and 3 is 5.")},
		{name: "add floats", kind: toolsCall, ident: "add", params: `{"arguments":{"a":1.5,"b":-0.25}}`, want: text("The sum of 1.5 and -0.25 is 1.25.")},
		{name: "add large", kind: toolsCall, ident: "add", params: `{"arguments":{"a":1e21,"b":2.0}}`, want: text("The sum of 1e+21 and 2 is 1e+21.")},
		{name: "add missing b", kind: toolsCall, ident: "add", params: `{"arguments":{"a":2}}`,
			want: invalid("Invalid arguments for tool add: b must be a number"), isErr: true},
		{name: "add string a", kind: toolsCall, ident: "add", params: `{"arguments":{"a":"2","b":3}}`,
			want: invalid("Invalid arguments for tool add: a must be a number"), isErr: true},
		{name: "add null a", kind: toolsCall, ident: "add", params: `{"arguments":{"a":null,"b":3}}`,
			want: invalid("Invalid arguments for tool add: a must be a number"), isErr: true},
		{name: "add nan", kind: toolsCall, ident: "add", params: `{"arguments":{"a":NaN,"b":3}}`,
			want: invalid("Invalid arguments for tool add: a must be a number"), isErr: true},
		{name: "add overflow", kind: toolsCall, ident: "add", params: `{"arguments":{"a":1.7e308,"b":1.7e308}}`,
			want: invalid("Invalid arguments for tool add: the sum is out of range"), isErr: true},
		{name: "long duration too long", kind: toolsCall, ident: "long_running_operation", params: `{"arguments":{"duration":31}}`,
			want: invalid("Invalid arguments for tool long_running_operation: duration must be a number of seconds from 0 to 30"), isErr: true},
		{name: "long duration negative", kind: toolsCall, ident: "long_running_operation", params: `{"arguments":{"duration":-1}}`,
			want: invalid("Invalid arguments for tool long_running_operation: duration must be a number of seconds from 0 to 30"), isErr: true},
		{name: "long duration string", kind: toolsCall, ident: "long_running_operation", params: `{"arguments":{"duration":"2"}}`,
			want: invalid("Invalid arguments for tool long_running_operation: duration must be a number of seconds from 0 to 30"), isErr: true},
		{name: "long steps fraction", kind: toolsCall, ident: "long_running_operation", params: `{"arguments":{"steps":2.5}}`,
			want: invalid("Invalid arguments for tool long_running_operation: steps must be an integer from 1 to 100"), isErr: true},
		{name: "long steps zero", kind: toolsCall, ident: "long_running_operation", params: `{"arguments":{"steps":0}}`,
			want: invalid("Invalid arguments for tool long_running_operation: steps must be an integer from 1 to 100"), isErr: true},
		{name: "long steps too many", kind: toolsCall, ident: "long_running_operation", params: `{"arguments":{"steps":101}}`,
			want: invalid("Invalid arguments for tool long_running_operation: steps must be an integer from 1 to 100"), isErr: true},
		{name: "long token object", kind: toolsCall, ident: "long_running_operation", params: `{"_meta":{"progressToken":{}}}`,
			want: invalid("Invalid params: _meta.progressToken must be a string or an integer"), isErr: true},
		{name: "unknown tool", kind: toolsCall, ident: "nope", params: `{}`, want: invalid("Unknown tool: nope"), isErr: true},
		{name: "unknown tool escaped", kind: toolsCall, ident: "a\"b", params: `{}`, want: invalid(`Unknown tool: a\"b`), isErr: true},
		{name: "no tool name", kind: toolsCall, params: `{"arguments":{}}`, want: invalid("Invalid params: name is required"), isErr: true},
		{name: "params not an object", kind: toolsCall, ident: "echo", params: `[1]`, want: invalid("Invalid params: not a JSON object"), isErr: true},
		{name: "params not JSON", kind: toolsCall, ident: "echo", params: `{"arguments":`, want: invalid("Invalid params: not a JSON object"), isErr: true},
		{name: "tools list without params", kind: toolsList, params: ``, want: `{"tools":[`},
		{name: "tools list empty cursor", kind: toolsList, params: `{"cursor":""}`, want: `{"tools":[`},
		{name: "tools list null cursor", kind: toolsList, params: `{"cursor":null}`, want: `{"tools":[`},
		{name: "tools list cursor", kind: toolsList, params: `{"cursor":"x"}`, want: invalid("Invalid cursor"), isErr: true},
		{name: "tools list numeric cursor", kind: toolsList, params: `{"cursor":2}`, want: invalid("Invalid cursor"), isErr: true},
		{name: "prompt", kind: promptsGet, ident: "greeting", params: `{"arguments":{"name":"Ada"}}`,
			want: `{"description":"A greeting for Ada","messages":[{"role":"user","content":{"type":"text","text":"Say hello to Ada."}}]}`},
		{name: "prompt styled", kind: promptsGet, ident: "greeting", params: `{"arguments":{"name":"Ada","style":"formal"}}`,
			want: `{"description":"A greeting for Ada","messages":[{"role":"user","content":{"type":"text","text":"Say hello to Ada in a formal style."}}]}`},
		{name: "prompt missing name", kind: promptsGet, ident: "greeting", params: `{}`, want: invalid("Missing required argument: name"), isErr: true},
		{name: "prompt empty name", kind: promptsGet, ident: "greeting", params: `{"arguments":{"name":""}}`, want: invalid("Missing required argument: name"), isErr: true},
		{name: "prompt number name", kind: promptsGet, ident: "greeting", params: `{"arguments":{"name":1}}`,
			want: invalid("Invalid arguments for prompt greeting: name must be a string"), isErr: true},
		{name: "prompt number style", kind: promptsGet, ident: "greeting", params: `{"arguments":{"name":"Ada","style":1}}`,
			want: invalid("Invalid arguments for prompt greeting: style must be a string"), isErr: true},
		{name: "unknown prompt", kind: promptsGet, ident: "nope", params: `{}`, want: invalid("Unknown prompt: nope"), isErr: true},
		{name: "readme", kind: readRes, ident: "sluice://toolkit/readme", params: `{}`, want: `{"contents":[{"uri":"sluice://toolkit/readme","mimeType":"text/plain","text":"Sluice toolkit:`},
		{name: "template", kind: readRes, params: `{"uri":"sluice://toolkit/echo/a%22b%2Fc"}`,
			want: `{"contents":[{"uri":"sluice://toolkit/echo/a%22b%2Fc","mimeType":"text/plain","text":"a\"b/c"}]}`},
		{name: "template bad escape", kind: readRes, ident: "sluice://toolkit/echo/a%2", params: `{}`,
			want: invalid("Invalid params: malformed percent-encoding in uri"), isErr: true},
		{name: "template empty", kind: readRes, ident: "sluice://toolkit/echo/", params: `{}`,
			want: `{"code":-32002,"message":"Resource not found","data":{"uri":"sluice://toolkit/echo/"}}`, isErr: true},
		{name: "template nested", kind: readRes, ident: "sluice://toolkit/echo/a/b", params: `{}`,
			want: `{"code":-32002,"message":"Resource not found","data":{"uri":"sluice://toolkit/echo/a/b"}}`, isErr: true},
		{name: "unknown resource", kind: readRes, ident: "file:///etc/passwd", params: `{}`,
			want: `{"code":-32002,"message":"Resource not found","data":{"uri":"file:///etc/passwd"}}`, isErr: true},
		{name: "read without uri", kind: readRes, params: `{}`, want: invalid("Invalid params: uri is required"), isErr: true},
		{name: "subscribe", kind: subscribe, ident: "sluice://toolkit/readme", params: `{"uri":"sluice://toolkit/readme"}`, want: `{}`},
		{name: "unsubscribe", kind: unsubscribe, params: `{"uri":"sluice://toolkit/readme"}`, want: `{}`},
		{name: "subscribe without uri", kind: subscribe, params: `{}`, want: invalid("Invalid params: uri is required"), isErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ident []byte
			if tt.ident != "" {
				ident = []byte(tt.ident)
			}
			out, isErr, long := toolkit.Answer(tt.kind, ident, []byte(tt.params))
			require.Nil(t, long)
			assert.Equal(t, tt.isErr, isErr)
			assert.True(t, json.Valid([]byte(out)), "not JSON: %s", out)
			if len(out) > len(tt.want) && !isErr {
				out = out[:len(tt.want)] // a long fixed result: its start
			}
			assert.Equal(t, tt.want, out)
		})
	}
}

func TestAnswerLong(t *testing.T) {
	tests := []struct {
		name   string
		params string
		want   toolkit.Long
	}{
		{name: "defaults", params: `{}`, want: toolkit.Long{Seconds: 2, Steps: 5}},
		{name: "null arguments", params: `{"arguments":null}`, want: toolkit.Long{Seconds: 2, Steps: 5}},
		{name: "given", params: `{"arguments":{"duration":0.5,"steps":3}}`, want: toolkit.Long{Seconds: 0.5, Steps: 3}},
		{name: "integral float steps", params: `{"arguments":{"steps":4.0}}`, want: toolkit.Long{Seconds: 2, Steps: 4}},
		{name: "limits", params: `{"arguments":{"duration":30,"steps":100}}`, want: toolkit.Long{Seconds: 30, Steps: 100}},
		{name: "zero duration", params: `{"arguments":{"duration":0,"steps":1}}`, want: toolkit.Long{Seconds: 0, Steps: 1}},
		{name: "string token", params: `{"_meta":{"progressToken":"tok-1"}}`, want: toolkit.Long{Seconds: 2, Steps: 5, Token: `"tok-1"`}},
		{name: "integer token", params: `{"_meta":{"progressToken":7}}`, want: toolkit.Long{Seconds: 2, Steps: 5, Token: `7`}},
		{name: "null token", params: `{"_meta":{"progressToken":null}}`, want: toolkit.Long{Seconds: 2, Steps: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, isErr, long := toolkit.Answer(toolsCall, []byte("long_running_operation"), []byte(tt.params))
			require.False(t, isErr, out)
			require.NotNil(t, long)
			assert.Equal(t, tt.want, *long)
		})
	}
	assert.Equal(t, text("Long running operation completed. Duration: 0.5 seconds, Steps: 3."), toolkit.LongResult(0.5, 3))
}

// TestLists checks the fixed list results are the JSON MCP clients expect.
func TestLists(t *testing.T) {
	tests := []struct {
		kind uint8
		key  string
		n    int
	}{
		{mcp.McpBeginExKindToolsList, "tools", 3},
		{mcp.McpBeginExKindPromptsList, "prompts", 1},
		{mcp.McpBeginExKindResourcesList, "resources", 1},
		{mcp.McpBeginExKindResourcesTemplatesList, "resourceTemplates", 1},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			out, isErr, _ := toolkit.Answer(tt.kind, nil, []byte(`{}`))
			require.False(t, isErr)
			var v map[string][]map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &v))
			require.Len(t, v[tt.key], tt.n)
			for _, item := range v[tt.key] {
				assert.NotEmpty(t, item["name"])
				if tt.key == "tools" {
					schema, ok := item["inputSchema"].(map[string]any)
					require.True(t, ok, "tool %v has no inputSchema", item["name"])
					assert.Equal(t, "object", schema["type"])
				}
			}
		})
	}
}

// TestAnswerAllocs: once its buffers have grown, a responder answers
// without allocating.
func TestAnswerAllocs(t *testing.T) {
	tests := []struct {
		name   string
		kind   uint8
		ident  string
		params string
	}{
		{"tools list", toolsList, "", `{}`},
		{"echo", toolsCall, "echo", `{"name":"echo","arguments":{"message":"hello"}}`},
		{"add", toolsCall, "add", `{"name":"add","arguments":{"a":0.1,"b":2}}`},
		{"long", toolsCall, "long_running_operation", `{"arguments":{"duration":1,"steps":2},"_meta":{"progressToken":"t"}}`},
		{"unknown tool", toolsCall, "nope", `{}`},
		{"prompt", promptsGet, "greeting", `{"name":"greeting","arguments":{"name":"Ada","style":"pirate"}}`},
		{"readme", readRes, "sluice://toolkit/readme", `{"uri":"sluice://toolkit/readme"}`},
		{"template", readRes, "sluice://toolkit/echo/a%20b", `{"uri":"sluice://toolkit/echo/a%20b"}`},
		{"unknown resource", readRes, "sluice://x", `{"uri":"sluice://x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r toolkit.Responder
			ident, params := []byte(tt.ident), []byte(tt.params)
			r.Respond(tt.kind, ident, params)
			allocs := testing.AllocsPerRun(100, func() { r.Respond(tt.kind, ident, params) })
			assert.Zero(t, allocs)
		})
	}
}

func BenchmarkAnswerEcho(b *testing.B) {
	var r toolkit.Responder
	ident, params := []byte("echo"), []byte(`{"name":"echo","arguments":{"message":"hello"}}`)
	b.ReportAllocs()
	for b.Loop() {
		r.Respond(toolsCall, ident, params)
	}
}
