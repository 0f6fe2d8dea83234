// Package dynamic builds, matches, decodes and formats values of IDL types
// at run time, driven by the checked IDL itself rather than by generated
// code. It backs the function libraries of the spec script language — the
// k3po-style mcp:beginEx()…build() builders and mcp:matchBeginEx()…
// matchers — so that every extension declared in an .idl file gets its
// functions without hand-written code per field.
//
// A Schema indexes the structs, unions and lists of some checked files.
// Builder and Matcher take the method chains of Zilla's k3po functions,
// one Call per method; the method names are the IDL's field and case names:
//
//	s, _ := dynamic.Builtin()
//	b, _ := s.NewBuilder("McpBeginEx")
//	b.Call("typeId", 3)
//	c, _ := b.Call("toolsCall") // the case's builder
//	c.(*dynamic.Builder).Call("sessionId", "s")
//	c.(*dynamic.Builder).Call("name", "get_weather")
//	c.(*dynamic.Builder).Call("build") // back to b
//	ext, _ := b.Call("build")          // the encoded []byte
//
// The bytes are exactly those the generated builders write (the encoding
// is described in package idl): a field never set takes its IDL default,
// a size field is computed from its octets, and fields may be set in any
// order. A Matcher checks only the fields it was given:
//
//	m, _ := s.NewMatcher("McpBeginEx")
//	m.Call("toolsCall") // ….Call("name", "get_weather"), build(), build()
//	err := m.Match(ext) // McpBeginEx.toolsCall.name: expected "get_weather", got "echo"
//
// Decode and Format read any value of the schema, for assertions and for
// printing observed frames. The decoder accepts what the generated
// readers accept and never panics on hostile input.
//
// Errors are *Error values that name the path of the field concerned and
// wrap a sentinel (ErrUnknownMethod, ErrArgs, ErrRange, ErrMissing,
// ErrMalformed, ErrMismatch, …).
package dynamic
