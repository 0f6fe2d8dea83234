package mcp

// SetString sets a nullable string field of a builder through that field's
// Bytes and Null setters, passed as method values (b.NameBytes, b.NameNull),
// so that code holding a value and a null flag writes it in one call:
// null sets the field to null whatever v.
func SetString[B any](setBytes func(v []byte) B, setNull func() B, v []byte, null bool) B {
	if null {
		return setNull()
	}
	return setBytes(v)
}

// SetSessionID sets b's sessionId, which every BEGIN extension member has:
// null sets it to null whatever sid.
func SetSessionID[B interface {
	SessionIDBytes(v []byte) B
	SessionIDNull() B
}](b B, sid []byte, null bool) B {
	return SetString(b.SessionIDBytes, b.SessionIDNull, sid, null)
}

// ExBuilders holds a builder of each MCP extension a kind writes into the
// frames it sends. A kind keeps one per worker and wraps the builder it
// needs over each frame's extension slot, so that writing one allocates
// nothing.
type ExBuilders struct {
	Begin     McpBeginExBuilder
	Flush     McpFlushExBuilder
	End       McpEndExBuilder
	Reset     McpResetExBuilder
	Challenge McpChallengeExBuilder
}
