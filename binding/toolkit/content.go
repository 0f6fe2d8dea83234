package toolkit

import (
	"bytes"
	"math"
	"time"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// The toolkit's resources.
const (
	readmeURI       = "sluice://toolkit/readme"
	echoURIPrefix   = "sluice://toolkit/echo/"
	echoURITemplate = echoURIPrefix + "{text}"
	readmeText      = "Sluice toolkit: a built-in MCP server for demos and tests. Tools: echo, add, long_running_operation. Prompts: greeting. Resources: " + readmeURI + " and the template " + echoURITemplate + "."
	readmeMimeType  = "text/plain"
	maxDuration     = 30.0 // seconds, long_running_operation's limit
	maxSteps        = 100
	defaultDuration = 2.0
	defaultSteps    = 5
)

// The list results never change, so they are fixed bytes. Names, fields
// and shapes are MCP's (2025-11-25 schema): each tool has a JSON Schema
// inputSchema, each prompt its arguments.
var (
	toolsList = []byte(`{"tools":[` +
		`{"name":"echo","description":"Echoes back the input message","inputSchema":{"type":"object","properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"]}},` +
		`{"name":"add","description":"Adds two numbers","inputSchema":{"type":"object","properties":{"a":{"type":"number","description":"First number"},"b":{"type":"number","description":"Second number"}},"required":["a","b"]}},` +
		`{"name":"long_running_operation","description":"Demonstrates a long running operation with progress updates","inputSchema":{"type":"object","properties":{"duration":{"type":"number","default":2,"minimum":0,"maximum":30,"description":"Duration of the operation in seconds"},"steps":{"type":"integer","default":5,"minimum":1,"maximum":100,"description":"Number of steps in the operation"}}}}` +
		`]}`)
	resourcesList = []byte(`{"resources":[{"uri":"` + readmeURI + `","name":"readme","description":"What the toolkit offers","mimeType":"text/plain"}]}`)
	templatesList = []byte(`{"resourceTemplates":[{"uriTemplate":"` + echoURITemplate + `","name":"echo","description":"Reads back the text in the URI","mimeType":"text/plain"}]}`)
	promptsList   = []byte(`{"prompts":[{"name":"greeting","description":"A greeting for someone, in an optional style","arguments":[` +
		`{"name":"name","description":"Who to greet","required":true},` +
		`{"name":"style","description":"How to greet, e.g. formal or pirate","required":false}]}]}`)
	emptyResult = []byte(`{}`)
	readme      = []byte(readmeText)
)

// outcome says what a responder left in its output.
type outcome uint8

const (
	outcomeResult outcome = iota // out holds the result object
	outcomeError                 // out holds the JSON-RPC error object
	outcomeLong                  // a long-running operation; the plan says how
)

// plan is a validated long_running_operation call: steps progress
// notifications spread evenly over the duration, then the result.
type plan struct {
	duration time.Duration
	seconds  float64
	steps    int
	// token is the raw JSON of params._meta.progressToken ("tok-1" with
	// its quotes, or 7), nil when the caller asked for no progress. It
	// aliases the responder's output: copy it to keep it.
	token []byte
}

// responder answers requests. One per handler: its parser and output
// buffer are reused by every request, so answering allocates only while
// they grow.
type responder struct {
	p   fastjson.Parser
	out []byte
}

// respond answers one request of kind (an McpBeginEx kind). ident is the
// tool or prompt name or the resource uri the request's BEGIN carried, nil
// when it had none; params is the JSON-RPC params object. The result or
// error object is left in r.out, valid until the next call.
func (r *responder) respond(kind uint8, ident, params []byte) (outcome, plan) {
	r.out = r.out[:0]
	if len(bytes.TrimSpace(params)) == 0 {
		params = emptyResult // a request without params
	}
	v, err := r.p.ParseBytes(params)
	if err != nil || v.Type() != fastjson.TypeObject {
		return r.fail(jsonrpc.CodeInvalidParams, "Invalid params: not a JSON object"), plan{}
	}
	switch kind {
	case mcp.McpBeginExKindToolsList:
		return r.list(v, toolsList), plan{}
	case mcp.McpBeginExKindPromptsList:
		return r.list(v, promptsList), plan{}
	case mcp.McpBeginExKindResourcesList:
		return r.list(v, resourcesList), plan{}
	case mcp.McpBeginExKindResourcesTemplatesList:
		return r.list(v, templatesList), plan{}
	case mcp.McpBeginExKindToolsCall:
		return r.callTool(orParam(ident, v, "name"), v)
	case mcp.McpBeginExKindPromptsGet:
		return r.getPrompt(orParam(ident, v, "name"), v), plan{}
	case mcp.McpBeginExKindResourcesRead:
		return r.readResource(orParam(ident, v, "uri")), plan{}
	case mcp.McpBeginExKindResourcesSubscribe, mcp.McpBeginExKindResourcesUnsubscribe:
		// The toolkit's resources never change, so a subscription has
		// nothing to report; it is accepted all the same.
		if orParam(ident, v, "uri") == nil {
			return r.fail(jsonrpc.CodeInvalidParams, "Invalid params: uri is required"), plan{}
		}
		r.out = append(r.out, emptyResult...)
		return outcomeResult, plan{}
	}
	return r.fail(jsonrpc.CodeMethodNotFound, "Method not found"), plan{}
}

// orParam returns ident, or else the string params[key].
func orParam(ident []byte, params *fastjson.Value, key string) []byte {
	if ident != nil {
		return ident
	}
	if p := params.Get(key); p != nil && p.Type() == fastjson.TypeString {
		s, _ := p.StringBytes()
		return s
	}
	return nil
}

// list answers a list request with its one page. The toolkit issues no
// cursors, so any non-empty cursor is not one of its own (MCP.md §1.4:
// "An invalid cursor SHOULD get -32602").
func (r *responder) list(params *fastjson.Value, page []byte) outcome {
	if c := params.Get("cursor"); c != nil && c.Type() != fastjson.TypeNull {
		if s, err := c.StringBytes(); err != nil || len(s) > 0 {
			return r.fail(jsonrpc.CodeInvalidParams, "Invalid cursor")
		}
	}
	r.out = append(r.out, page...)
	return outcomeResult
}

func (r *responder) callTool(name []byte, params *fastjson.Value) (outcome, plan) {
	args := params.Get("arguments")
	if args != nil && args.Type() == fastjson.TypeNull {
		args = nil
	}
	if args != nil && args.Type() != fastjson.TypeObject {
		return r.failTool(name, "arguments must be an object"), plan{}
	}
	switch string(name) {
	case "echo":
		msg, ok := stringArg(args, "message")
		if !ok {
			return r.failTool(name, "message must be a string"), plan{}
		}
		r.out = append(r.out, `{"content":[{"type":"text","text":"Echo: `...)
		r.out = jsonrpc.AppendEscaped(r.out, msg)
		r.out = append(r.out, `"}]}`...)
		return outcomeResult, plan{}
	case "add":
		a, okA := numberArg(args, "a")
		b, okB := numberArg(args, "b")
		switch {
		case !okA:
			return r.failTool(name, "a must be a number"), plan{}
		case !okB:
			return r.failTool(name, "b must be a number"), plan{}
		}
		sum := a + b
		if math.IsInf(sum, 0) {
			return r.failTool(name, "the sum is out of range"), plan{}
		}
		r.out = append(r.out, `{"content":[{"type":"text","text":"The sum of `...)
		r.out = appendNumber(r.out, a)
		r.out = append(r.out, " and "...)
		r.out = appendNumber(r.out, b)
		r.out = append(r.out, " is "...)
		r.out = appendNumber(r.out, sum)
		r.out = append(r.out, `."}]}`...)
		return outcomeResult, plan{}
	case "long_running_operation":
		return r.planLong(name, args, params)
	}
	if name == nil {
		return r.fail(jsonrpc.CodeInvalidParams, "Invalid params: name is required"), plan{}
	}
	r.beginError(jsonrpc.CodeInvalidParams)
	r.out = append(r.out, "Unknown tool: "...)
	r.out = jsonrpc.AppendEscaped(r.out, name)
	return r.endError(nil), plan{}
}

func (r *responder) planLong(name []byte, args, params *fastjson.Value) (outcome, plan) {
	p := plan{seconds: defaultDuration, steps: defaultSteps}
	if d := optional(args, "duration"); d != nil {
		f, err := d.Float64()
		if err != nil || math.IsNaN(f) || f < 0 || f > maxDuration {
			return r.failTool(name, "duration must be a number of seconds from 0 to 30"), plan{}
		}
		p.seconds = f
	}
	if s := optional(args, "steps"); s != nil {
		f, err := s.Float64()
		if err != nil || f != math.Trunc(f) || f < 1 || f > maxSteps {
			return r.failTool(name, "steps must be an integer from 1 to 100"), plan{}
		}
		p.steps = int(f)
	}
	p.duration = time.Duration(p.seconds * float64(time.Second))
	if t := params.Get("_meta", "progressToken"); t != nil {
		// MCP.md §1.4: "a string or integer".
		switch t.Type() {
		case fastjson.TypeString, fastjson.TypeNumber:
			r.out = t.MarshalTo(r.out)
			p.token = r.out
		case fastjson.TypeNull:
		default:
			return r.fail(jsonrpc.CodeInvalidParams, "Invalid params: _meta.progressToken must be a string or an integer"), plan{}
		}
	}
	return outcomeLong, p
}

// appendLongResult appends the result of a finished long_running_operation.
func appendLongResult(dst []byte, p *plan) []byte {
	dst = append(dst, `{"content":[{"type":"text","text":"Long running operation completed. Duration: `...)
	dst = appendNumber(dst, p.seconds)
	dst = append(dst, " seconds, Steps: "...)
	dst = appendInt(dst, int64(p.steps))
	return append(dst, `."}]}`...)
}

func (r *responder) getPrompt(name []byte, params *fastjson.Value) outcome {
	if name == nil {
		return r.fail(jsonrpc.CodeInvalidParams, "Invalid params: name is required")
	}
	if string(name) != "greeting" {
		r.beginError(jsonrpc.CodeInvalidParams)
		r.out = append(r.out, "Unknown prompt: "...)
		r.out = jsonrpc.AppendEscaped(r.out, name)
		return r.endError(nil)
	}
	args := params.Get("arguments")
	if args != nil && args.Type() == fastjson.TypeNull {
		args = nil
	}
	if args != nil && args.Type() != fastjson.TypeObject {
		return r.fail(jsonrpc.CodeInvalidParams, "Invalid arguments for prompt greeting: arguments must be an object")
	}
	// Prompt arguments are strings (MCP schema: GetPromptRequest).
	who, ok := stringArg(args, "name")
	if !ok || len(who) == 0 {
		if optional(args, "name") != nil && !ok {
			return r.fail(jsonrpc.CodeInvalidParams, "Invalid arguments for prompt greeting: name must be a string")
		}
		return r.fail(jsonrpc.CodeInvalidParams, "Missing required argument: name")
	}
	style, hasStyle := stringArg(args, "style")
	if !hasStyle && optional(args, "style") != nil {
		return r.fail(jsonrpc.CodeInvalidParams, "Invalid arguments for prompt greeting: style must be a string")
	}
	r.out = append(r.out, `{"description":"A greeting for `...)
	r.out = jsonrpc.AppendEscaped(r.out, who)
	r.out = append(r.out, `","messages":[{"role":"user","content":{"type":"text","text":"Say hello to `...)
	r.out = jsonrpc.AppendEscaped(r.out, who)
	if len(style) > 0 {
		r.out = append(r.out, " in a "...)
		r.out = jsonrpc.AppendEscaped(r.out, style)
		r.out = append(r.out, " style"...)
	}
	r.out = append(r.out, `."}}]}`...)
	return outcomeResult
}

func (r *responder) readResource(uri []byte) outcome {
	if uri == nil {
		return r.fail(jsonrpc.CodeInvalidParams, "Invalid params: uri is required")
	}
	if string(uri) == readmeURI {
		r.beginContents(uri)
		r.out = jsonrpc.AppendEscaped(r.out, readme)
		r.out = append(r.out, `"}]}`...)
		return outcomeResult
	}
	if seg, ok := bytes.CutPrefix(uri, []byte(echoURIPrefix)); ok && len(seg) > 0 && !bytes.ContainsAny(seg, "/?#") {
		// The text is decoded into the tail of out, then escaped in front
		// of it: one buffer, no allocation once it has grown.
		mark := len(r.out)
		var valid bool
		r.out, valid = appendPercentDecoded(r.out, seg)
		if !valid {
			r.out = r.out[:mark]
			return r.fail(jsonrpc.CodeInvalidParams, "Invalid params: malformed percent-encoding in uri")
		}
		text := r.out[mark:]
		n := len(text)
		r.beginContents(uri)
		r.out = jsonrpc.AppendEscaped(r.out, r.out[mark:mark+n])
		r.out = append(r.out, `"}]}`...)
		r.out = append(r.out[:mark], r.out[mark+n:]...)
		return outcomeResult
	}
	// MCP 2025-11-25 server/resources: "Resource not found" is -32002, with
	// the uri in data.
	r.beginError(mcp.CodeResourceNotFound)
	r.out = append(r.out, "Resource not found"...)
	return r.endError(uri)
}

// beginContents starts a resources/read result up to its text's value.
func (r *responder) beginContents(uri []byte) {
	r.out = append(r.out, `{"contents":[{"uri":`...)
	r.out = jsonrpc.AppendString(r.out, uri)
	r.out = append(r.out, `,"mimeType":"`+readmeMimeType+`","text":"`...)
}

// stringArg returns args[key] when it is a string.
func stringArg(args *fastjson.Value, key string) ([]byte, bool) {
	v := optional(args, key)
	if v == nil || v.Type() != fastjson.TypeString {
		return nil, false
	}
	s, _ := v.StringBytes()
	return s, true
}

// numberArg returns args[key] when it is a finite number.
func numberArg(args *fastjson.Value, key string) (float64, bool) {
	v := optional(args, key)
	if v == nil {
		return 0, false
	}
	f, err := v.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// optional returns args[key], nil when it is absent or null.
func optional(args *fastjson.Value, key string) *fastjson.Value {
	if args == nil {
		return nil
	}
	v := args.Get(key)
	if v == nil || v.Type() == fastjson.TypeNull {
		return nil
	}
	return v
}

// fail leaves the error object {code, message} in r.out.
func (r *responder) fail(code int32, msg string) outcome {
	r.out = r.out[:0]
	r.beginError(code)
	r.out = jsonrpc.AppendEscaped(r.out, []byte(msg))
	return r.endError(nil)
}

// failTool fails a tools/call whose arguments do not fit the tool's schema.
func (r *responder) failTool(name []byte, why string) outcome {
	r.out = r.out[:0]
	r.beginError(jsonrpc.CodeInvalidParams)
	r.out = append(r.out, "Invalid arguments for tool "...)
	r.out = jsonrpc.AppendEscaped(r.out, name)
	r.out = append(r.out, ": "...)
	r.out = jsonrpc.AppendEscaped(r.out, []byte(why))
	return r.endError(nil)
}

// beginError starts an error object up to its message's value; the caller
// appends the escaped message and ends it with endError.
func (r *responder) beginError(code int32) {
	r.out = append(r.out, `{"code":`...)
	r.out = appendInt(r.out, int64(code))
	r.out = append(r.out, `,"message":"`...)
}

// endError closes the message and the object, with data {"uri": uri}
// when uri is not nil.
func (r *responder) endError(uri []byte) outcome {
	r.out = append(r.out, '"')
	if uri != nil {
		r.out = append(r.out, `,"data":{"uri":`...)
		r.out = jsonrpc.AppendString(r.out, uri)
		r.out = append(r.out, '}')
	}
	r.out = append(r.out, '}')
	return outcomeError
}
