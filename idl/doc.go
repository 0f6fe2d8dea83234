// Package idl parses and checks flyweight IDL files, the message description
// language of Zilla's flyweight-maven-plugin, for Sluice's code generators.
//
// # Syntax
//
// Comments are C style: /* block */ and // to the end of the line. A file
// holds one or more top-level scopes:
//
//	scope core
//	{
//	    option byteorder network;
//	    scope stream
//	    {
//	        struct Frame { int64 originId; int64 timestamp = 0; }
//	    }
//	}
//
// A scope body may start with "option byteorder native;" or "option
// byteorder network;"; a scope without the option takes its parent's byte
// order, and top-level scopes default to native. After the option come
// nested scopes and declarations, in any order:
//
//	struct Name [extends Type] [[0xTYPEID]] { fields }
//	union Name switch (Type) [extends Type] { case VALUE: field … }
//	enum Name [(IntegerType)] { A, B(2), C (0x10L) }
//	typedef Type as Name;
//	list<LengthType, CountType[, missing]> Name { [required] fields }
//
// A field is "Type name [= default];". "Type[] name;" declares an array,
// "octets[N] name;" a fixed number of bytes and "octets[size] name;" bytes
// whose count is held by the earlier integer field size; "octets name;"
// with no brackets runs to the end of the buffer and must come last. Only
// octets take a size in brackets. Several names may share a type
// ("int32 a, b;") when no default is given. Defaults are integer literals,
// string literals, null (strings and octets[size] only) or a constant of
// the field's enum.
//
// Type names may be qualified with "::". A qualified name (core::stream::
// Frame) is looked up from the root, across all the files checked together;
// scopes of the same name in several files merge. An unqualified name is
// looked up in the current scope, then in each enclosing scope outward.
// Keywords, including the primitive type names, cannot be used as names.
//
// The primitive types are int8, int16, int24, int32, int64, uint8, uint16,
// uint24, uint32, uint64, varint32, varint64, varuint32, string8, string16,
// string32 and octets.
//
// Integer literals are decimal or hexadecimal (0x…, '_' may separate hex
// digits), may be negative, and may end in the Java long suffix L or l,
// which is ignored. Values up to math.MaxUint64 are accepted; one above
// math.MaxInt64 is kept as its uint64 bits with Value.Uint set. String
// literals are double-quoted, on one line, with the escapes \" \\ \n \t \r
// and \uXXXX.
//
// An enum without a base type is encoded as uint8. Constants without a
// value count on from the previous constant (from 0 for the first).
//
// Parse accepts scopes nested at most MaxScopeDepth deep; Check accepts
// extends and typedef chains at most MaxChainLength long.
//
// Zilla's variant and map declarations, the varstring and varuint32n types,
// "list … using", parametric types, string-valued enums and sized arrays
// of anything but octets (int32[4], int32[len]) are not supported and are
// rejected with an error.
//
// # Encoding
//
// Multi-byte integers use the byte order of the declaring scope: native is
// little endian (the byte order of every platform Sluice supports), network
// is big endian. int24 and uint24 take three bytes.
//
//   - varint32 and varint64 are zig-zag encoded like protobuf's sint32 and
//     sint64, then written as base-128 varints (at most 5 and 10 bytes);
//     varuint32 is a plain base-128 varint.
//   - string8, string16 and string32 are a signed int8, int16 or int32 length
//     followed by that many bytes; length -1 encodes null.
//   - octets[N] is N bytes; octets[size] is as many bytes as the size field
//     says, -1 meaning null; plain octets is the rest of the buffer.
//   - T[] is an int32 byte length of the items, an int32 count, then the
//     items.
//   - An enum is encoded as its base integer.
//   - A struct is its parent's fields, then its own, in declaration order,
//     with no framing. Its type id is metadata for the generated code, not
//     part of the encoding.
//   - A union is its parent's fields, the kind (encoded as the switch type),
//     then the field of the selected case.
//   - A list is its length (the bytes that follow the length field), the
//     count of fields present, then either - without a missing byte - a
//     uint64 bit mask of the fields present followed by those fields, or -
//     with a missing byte - every field up to the last present one, an
//     absent field written as that byte. See List.
//
// # Usage
//
// Parse each file, then check them together:
//
//	core, err := idl.Parse("core.idl", coreSrc)
//	if err != nil {
//		return err // an idl.ErrorList: file:line:col: message
//	}
//	mcp, err := idl.Parse("mcp.idl", mcpSrc)
//	if err != nil {
//		return err
//	}
//	if err := idl.Check(core, mcp); err != nil {
//		return err
//	}
//	for _, d := range mcp.Decls() {
//		fmt.Println(idl.QualifiedName(d))
//	}
//
// ParseFiles does the same for files on disk.
package idl
