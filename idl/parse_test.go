package idl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loadChecked parses and checks the named files of testdata together.
func loadChecked(t *testing.T, names ...string) []*File {
	t.Helper()
	var files []*File
	for _, name := range names {
		path := filepath.Join("testdata", name)
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		f, err := Parse(path, src)
		require.NoError(t, err)
		files = append(files, f)
	}
	require.NoError(t, Check(files...))
	return files
}

// lookup finds a declaration by qualified name or fails the test.
func lookup[T Decl](t *testing.T, files []*File, name string) T {
	t.Helper()
	d, ok := Lookup(name, files...)
	require.True(t, ok, "no declaration %s", name)
	typed, ok := d.(T)
	require.True(t, ok, "%s is a %T", name, d)
	return typed
}

func namesOf(fields []*Field) []string {
	var names []string
	for _, f := range fields {
		names = append(names, f.Name)
	}
	return names
}

func TestParseAndCheck(t *testing.T) {
	files := loadChecked(t, "core.idl", "mcp.idl")
	core, mcp := files[0], files[1]

	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"scopes and byte order inheritance", func(t *testing.T) {
			require.Len(t, core.Scopes, 1)
			root := core.Scopes[0]
			assert.Equal(t, "core", root.Name)
			assert.Equal(t, Pos{File: "testdata/core.idl", Line: 5, Col: 7}, root.Pos)
			require.Len(t, root.Scopes, 2)
			stream, wire := root.Scopes[0], root.Scopes[1]
			assert.Equal(t, "core::stream", stream.QualifiedName())
			assert.Equal(t, Native, stream.ByteOrder)
			assert.Equal(t, Network, wire.ByteOrder)
			require.Len(t, wire.Scopes, 1)
			assert.Equal(t, Network, wire.Scopes[0].ByteOrder, "nested scopes inherit the byte order")
			assert.Same(t, wire, wire.Scopes[0].Parent)
		}},
		{"declarations in source order", func(t *testing.T) {
			var names []string
			for _, d := range core.Decls() {
				names = append(names, QualifiedName(d))
			}
			assert.Equal(t, []string{
				"core::stream::Capability", "core::stream::Flags", "core::stream::Extension",
				"core::stream::Frame", "core::stream::Data", "core::stream::HttpHeader",
				"core::stream::Fixed", "core::stream::Challenge", "core::stream::FrameAlias",
				"core::stream::FrameAlias2", "core::stream::Attributes", "core::stream::Small",
				"core::wire::Packet", "core::wire::inner::Inherits",
			}, names)
			assert.Len(t, core.Structs(), 7)
			assert.Len(t, core.Enums(), 2)
			assert.Len(t, core.Unions(), 1)
			assert.Len(t, core.Typedefs(), 2)
			assert.Len(t, core.Lists(), 2)
		}},
		{"enum ordinals and explicit values", func(t *testing.T) {
			capability := lookup[*Enum](t, files, "core::stream::Capability")
			assert.Nil(t, capability.Base)
			assert.Equal(t, Uint8, capability.BaseKind())
			require.Len(t, capability.Values, 2)
			assert.Equal(t, int64(0), capability.Values[0].Value)
			assert.Equal(t, int64(1), capability.Values[1].Value)
			assert.False(t, capability.Values[1].Explicit)

			flags := lookup[*Enum](t, files, "core::stream::Flags")
			assert.Same(t, Prim(Uint8), flags.Base.Resolved)
			var values []int64
			for _, v := range flags.Values {
				values = append(values, v.Value)
			}
			assert.Equal(t, []int64{1, 2, 4, 5}, values, "SKIP continues after INCOMPLETE (0x04L)")
			assert.True(t, flags.Values[2].Explicit)
			assert.False(t, flags.Values[3].Explicit)
		}},
		{"struct with extends, type id and sized octets", func(t *testing.T) {
			data := lookup[*Struct](t, files, "core::stream::Data")
			frame := lookup[*Struct](t, files, "core::stream::Frame")
			assert.True(t, data.HasTypeID)
			assert.Equal(t, uint32(2), data.TypeID)
			assert.Same(t, frame, data.Parent)
			assert.Equal(t, "Frame", data.Extends.Name)
			assert.Equal(t, []string{"originId", "routedId", "streamId", "timestamp", "flags", "length", "payload", "extension"},
				namesOf(data.AllFields()))

			flags, length, payload, extension := data.Fields[0], data.Fields[1], data.Fields[2], data.Fields[3]
			assert.Equal(t, &Value{Pos: flags.Default.Pos, Kind: IntValue, Int: 3}, flags.Default)
			assert.Equal(t, "length", payload.SizeName)
			assert.Same(t, length, payload.SizeField)
			assert.Same(t, payload, length.SizeOf)
			assert.Same(t, payload, data.SizedBy(length))
			assert.Equal(t, NullValue, payload.Default.Kind)
			assert.False(t, payload.Unbounded())
			assert.True(t, extension.Unbounded())
			assert.Equal(t, Octets, extension.Type.PrimKind())

			assert.False(t, frame.HasTypeID)
			assert.Equal(t, Pos{File: "testdata/core.idl", Line: 29, Col: 19}, frame.Fields[0].Pos)
		}},
		{"primitives are shared", func(t *testing.T) {
			ext := lookup[*Struct](t, files, "core::stream::Extension")
			data := lookup[*Struct](t, files, "core::stream::Data")
			assert.Same(t, ext.Fields[1].Type.Resolved, data.Fields[1].Type.Resolved, "int32")
			assert.Same(t, Prim(Int32), data.Fields[1].Type.Resolved)
		}},
		{"fields, arrays and defaults", func(t *testing.T) {
			fixed := lookup[*Struct](t, files, "core::stream::Fixed")
			byName := map[string]*Field{}
			for _, f := range fixed.Fields {
				byName[f.Name] = f
			}
			assert.Equal(t, 16, byName["key"].SizeLit)
			assert.Equal(t, "x\t\"y\"é", byName["a"].Default.Str)
			assert.Equal(t, NullValue, byName["b"].Default.Kind)

			headers := byName["headers"]
			assert.True(t, headers.Array)
			assert.Same(t, lookup[*Struct](t, files, "core::stream::HttpHeader"), headers.Type.Resolved)

			assert.Equal(t, int64(-1), byName["v"].Default.Int)
			assert.False(t, byName["v"].Default.Uint)
			big := byName["big"].Default
			assert.True(t, big.Uint)
			assert.Equal(t, uint64(18446744073709551615), uint64(big.Int))
			assert.Equal(t, "18446744073709551615", big.String())

			assert.Equal(t, &Value{Pos: byName["capability"].Default.Pos, Kind: IdentValue, Ident: "ABORT"}, byName["capability"].Default)
			assert.Same(t, byName["size"], byName["bytes"].SizeField, "a varuint32 size field right before its octets")
		}},
		{"union with enum switch and extends", func(t *testing.T) {
			challenge := lookup[*Union](t, files, "core::stream::Challenge")
			assert.Same(t, lookup[*Enum](t, files, "core::stream::Capability"), challenge.Switch.Resolved)
			assert.Same(t, lookup[*Struct](t, files, "core::stream::Extension"), challenge.Parent)
			assert.Equal(t, []string{"compositeId", "typeId"}, namesOf(challenge.ParentFields()))
			assert.Equal(t, Uint8, challenge.SwitchKind())
			require.Len(t, challenge.Cases, 2)
			assert.Equal(t, int64(0), challenge.Cases[0].Kind)
			assert.Equal(t, "CHALLENGE", challenge.Cases[0].Value.Ident)
			assert.Equal(t, int64(1), challenge.Cases[1].Kind)
			assert.Equal(t, 8, challenge.Cases[1].Field.SizeLit)
		}},
		{"typedef chains", func(t *testing.T) {
			packet := lookup[*Struct](t, files, "core::wire::Packet")
			frame := packet.Fields[1]
			assert.Equal(t, "core::stream::FrameAlias2", frame.Type.Name)
			assert.Same(t, lookup[*Struct](t, files, "core::stream::Frame"), frame.Type.Resolved)
			require.Len(t, frame.Type.Typedefs, 2)
			assert.Equal(t, "FrameAlias2", frame.Type.Typedefs[0].Name)
			assert.Equal(t, "FrameAlias", frame.Type.Typedefs[1].Name)
		}},
		{"lists", func(t *testing.T) {
			attrs := lookup[*List](t, files, "core::stream::Attributes")
			assert.Same(t, Prim(Uint32), attrs.LengthType.Resolved)
			assert.Same(t, Prim(Uint32), attrs.CountType.Resolved)
			assert.False(t, attrs.HasMissing)
			assert.True(t, attrs.Fields[0].Required)
			assert.False(t, attrs.Fields[1].Required)
			assert.Equal(t, "FIN", attrs.Fields[2].Default.Ident)

			small := lookup[*List](t, files, "core::stream::Small")
			assert.True(t, small.HasMissing)
			assert.Equal(t, int64(0x40), small.Missing)
			assert.Same(t, Prim(Uint8), small.CountType.Resolved)
		}},
		{"cross-file references and merged scopes", func(t *testing.T) {
			begin := lookup[*Union](t, files, "mcp::stream::McpBeginEx")
			assert.Same(t, lookup[*Struct](t, files, "core::stream::Extension"), begin.Parent)
			assert.Same(t, lookup[*Struct](t, files, "mcp::stream::McpLifecycleBeginEx"), begin.Cases[0].Field.Type.Resolved)
			assert.Same(t, lookup[*Struct](t, files, "mcp::stream::McpToolsListBeginEx"), begin.Cases[1].Field.Type.Resolved)
			assert.Equal(t, []int64{0, 1, 2}, []int64{begin.Cases[0].Kind, begin.Cases[1].Kind, begin.Cases[2].Kind})

			dataEx := lookup[*Struct](t, files, "mcp::stream::McpDataEx")
			assert.Equal(t, uint32(0x7fffffff), dataEx.TypeID)

			// core::stream::Abort is declared in mcp.idl and extends Frame
			// from core.idl by its unqualified name.
			abort := lookup[*Struct](t, files, "core::stream::Abort")
			assert.Equal(t, "testdata/mcp.idl", abort.Pos.File)
			assert.Same(t, lookup[*Struct](t, files, "core::stream::Frame"), abort.Parent)
			assert.Len(t, mcp.Decls(), 6)
		}},
		{"check is repeatable", func(t *testing.T) {
			require.NoError(t, Check(core, mcp))
			data := lookup[*Struct](t, files, "core::stream::Data")
			assert.Same(t, data.Fields[1], data.Fields[2].SizeField)
			packet := lookup[*Struct](t, files, "core::wire::Packet")
			assert.Len(t, packet.Fields[1].Type.Typedefs, 2)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.check)
	}
}

func TestParseSyntax(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		check func(t *testing.T, f *File)
	}{
		{
			name: "comments everywhere and line comment at end of file",
			src:  "/* a */ scope /* b */ s // c\n{ struct /**/ S { int8 /* x */ a; } } // end",
			check: func(t *testing.T, f *File) {
				assert.Equal(t, "S", f.Scopes[0].Decls[0].DeclName())
			},
		},
		{
			name: "several top-level scopes",
			src:  "scope a { } scope b { option byteorder network; }",
			check: func(t *testing.T, f *File) {
				require.Len(t, f.Scopes, 2)
				assert.Equal(t, Network, f.Scopes[1].ByteOrder)
			},
		},
		{
			name: "integer literal forms",
			src: `scope s { struct S {
				int64 a = -9223372036854775808; uint32 b = 0xFFFF_FFFFL; int8 c = - 1; uint64 d = 0X10l;
			} }`,
			check: func(t *testing.T, f *File) {
				fields := f.Scopes[0].Decls[0].(*Struct).Fields
				assert.Equal(t, int64(-9223372036854775808), fields[0].Default.Int)
				assert.Equal(t, int64(0xFFFFFFFF), fields[1].Default.Int)
				assert.Equal(t, int64(-1), fields[2].Default.Int)
				assert.Equal(t, int64(16), fields[3].Default.Int)
			},
		},
		{
			name: "several names share a type",
			src:  "scope s { struct S { int32 a, b; } }",
			check: func(t *testing.T, f *File) {
				fields := f.Scopes[0].Decls[0].(*Struct).Fields
				require.Len(t, fields, 2)
				assert.Equal(t, "int32", fields[1].Type.Name)
				assert.NotSame(t, fields[0].Type, fields[1].Type)
				assert.Equal(t, 31, fields[1].Pos.Col)
			},
		},
		{
			name: "enum with trailing comma, negative and hex values",
			src:  "scope s { enum E (int16) { A(-2), B, C (0x10L), } }",
			check: func(t *testing.T, f *File) {
				e := f.Scopes[0].Decls[0].(*Enum)
				require.NoError(t, Check(f))
				assert.Equal(t, []int64{-2, -1, 16}, []int64{e.Values[0].Value, e.Values[1].Value, e.Values[2].Value})
			},
		},
		{
			name: "root-qualified names and union with negative case",
			src:  "scope s { union U switch (int8) { case -1: ::s::T t; case 0x7f: int8 x; } struct T { int8 a; } }",
			check: func(t *testing.T, f *File) {
				require.NoError(t, Check(f))
				u := f.Scopes[0].Decls[0].(*Union)
				assert.Equal(t, int64(-1), u.Cases[0].Kind)
				assert.Equal(t, int64(127), u.Cases[1].Kind)
				assert.Same(t, f.Scopes[0].Decls[1], u.Cases[0].Field.Type.Resolved)
			},
		},
		{
			name: "typedef of a primitive",
			src:  "scope s { typedef octets as Blob; typedef uint16 as Port; struct S { Port p = 80; Blob rest; } }",
			check: func(t *testing.T, f *File) {
				require.NoError(t, Check(f))
				s := f.Scopes[0].Decls[2].(*Struct)
				assert.Same(t, Prim(Uint16), s.Fields[0].Type.Resolved)
				assert.True(t, s.Fields[1].Unbounded())
			},
		},
		{
			name: "unqualified names are looked up outward",
			src:  "scope a { struct X { int8 x; } scope b { struct Y { X x; } scope c { struct X { int16 x; } struct Z { X x; } } } }",
			check: func(t *testing.T, f *File) {
				require.NoError(t, Check(f))
				outer := f.Scopes[0].Decls[0]
				b := f.Scopes[0].Scopes[0]
				c := b.Scopes[0]
				assert.Same(t, outer, b.Decls[0].(*Struct).Fields[0].Type.Resolved)
				assert.Same(t, c.Decls[0], c.Decls[1].(*Struct).Fields[0].Type.Resolved, "the innermost X wins")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("t.idl", []byte(tt.src))
			require.NoError(t, err)
			tt.check(t, f)
		})
	}
}

// TestRepositoryIDLs checks the IDL files the generators compile, which
// live beside this package's sources, all together.
func TestRepositoryIDLs(t *testing.T) {
	paths, err := filepath.Glob("*.idl")
	require.NoError(t, err)
	if len(paths) == 0 {
		t.Skip("no IDL files beside the package")
	}
	files, err := ParseFiles(paths...)
	require.NoError(t, err)
	for _, f := range files {
		t.Run(f.Name, func(t *testing.T) {
			assert.NotEmpty(t, f.Decls())
			for _, s := range f.Structs() {
				for _, fl := range s.Fields {
					assert.NotNil(t, fl.Type.Resolved, "%s.%s", s.Name, fl.Name)
				}
			}
		})
	}
}
