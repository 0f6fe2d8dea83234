package mcp

// Setters for the fields every request kind's BEGIN extension shares, so
// that code building any kind writes each field once rather than once per
// kind. null sets the field to null (length -1) whatever the value.

// SetSessionID sets b's sessionId.
func SetSessionID[B interface {
	SessionIDBytes(v []byte) B
	SessionIDNull() B
}](b B, sid []byte, null bool) B {
	if null {
		return b.SessionIDNull()
	}
	return b.SessionIDBytes(sid)
}

// SetName sets b's name (tools/call, prompts/get).
func SetName[B interface {
	NameBytes(v []byte) B
	NameNull() B
}](b B, name []byte, null bool) B {
	if null {
		return b.NameNull()
	}
	return b.NameBytes(name)
}

// SetURI sets b's uri (resources/read, subscribe, unsubscribe).
func SetURI[B interface {
	URIBytes(v []byte) B
	URINull() B
}](b B, uri []byte, null bool) B {
	if null {
		return b.URINull()
	}
	return b.URIBytes(uri)
}

// SetMethod sets b's method (the generic request kind).
func SetMethod[B interface {
	MethodBytes(v []byte) B
	MethodNull() B
}](b B, method []byte, null bool) B {
	if null {
		return b.MethodNull()
	}
	return b.MethodBytes(method)
}
