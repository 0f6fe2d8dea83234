package jsonrpc

// The error codes JSON-RPC 2.0 defines (§5.1) that the MCP bindings
// answer with.
const (
	CodeParseError     int32 = -32700
	CodeInvalidRequest int32 = -32600
	CodeMethodNotFound int32 = -32601
	CodeInvalidParams  int32 = -32602
	CodeInternalError  int32 = -32603
)
