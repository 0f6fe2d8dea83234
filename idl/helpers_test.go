package idl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHelpers(t *testing.T) {
	src := `scope a {
    struct First { int8 x; }
    scope inner { enum Middle { M } }
    union Last switch (a::inner::Middle) { case M: int8 m; }
}`
	src2 := "scope a { scope inner { enum Middle2 (int16) { N } } union U switch (a::inner::Middle2) { case N: int8 n; } }"

	tests := []struct {
		name  string
		check func(t *testing.T, f, f2 *File)
	}{
		{"decls interleave nested scopes by position", func(t *testing.T, f, _ *File) {
			var names []string
			for _, d := range f.Decls() {
				names = append(names, QualifiedName(d))
			}
			assert.Equal(t, []string{"a::First", "a::inner::Middle", "a::Last"}, names)
			assert.Equal(t, names, qualified(f.Scopes[0].AllDecls()))
		}},
		{"typed accessors", func(t *testing.T, f, _ *File) {
			require.Len(t, f.Structs(), 1)
			assert.Equal(t, "First", f.Structs()[0].Name)
			assert.Len(t, f.Unions(), 1)
			assert.Len(t, f.Enums(), 1)
			assert.Empty(t, f.Lists())
			assert.Empty(t, f.Typedefs())
		}},
		{"lookup across files", func(t *testing.T, f, f2 *File) {
			d, ok := Lookup("a::inner::Middle2", f, f2)
			require.True(t, ok)
			assert.Equal(t, "Middle2", d.DeclName())
			_, ok = Lookup("a::inner::Nope", f, f2)
			assert.False(t, ok)
		}},
		{"switch kind", func(t *testing.T, f, f2 *File) {
			assert.Equal(t, Uint8, f.Unions()[0].SwitchKind())
			assert.Equal(t, Int16, f2.Unions()[0].SwitchKind())
		}},
		{"primitives", func(t *testing.T, f, _ *File) {
			assert.Same(t, Prim(Int8), f.Structs()[0].Fields[0].Type.Resolved)
			assert.Equal(t, Int8, f.Structs()[0].Fields[0].Type.PrimKind())
			assert.Nil(t, Prim(0))
			assert.Nil(t, Prim(Octets+1))
			assert.Equal(t, PrimKind(0), f.Unions()[0].Switch.PrimKind())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("a.idl", []byte(src))
			require.NoError(t, err)
			f2, err := Parse("b.idl", []byte(src2))
			require.NoError(t, err)
			require.NoError(t, Check(f, f2))
			tt.check(t, f, f2)
		})
	}
}

func qualified(decls []Decl) []string {
	var names []string
	for _, d := range decls {
		names = append(names, QualifiedName(d))
	}
	return names
}

func TestSizedByInheritedSizeField(t *testing.T) {
	f, err := Parse("t.idl", []byte(`scope s {
    struct P { int16 n; }
    struct A extends P { octets[n] a = null; }
    struct B extends P { int8 x; octets[n] b; }
}`))
	require.NoError(t, err)
	require.NoError(t, Check(f), "each child may size the inherited field once")
	p, a, b := f.Structs()[0], f.Structs()[1], f.Structs()[2]
	n := p.Fields[0]
	assert.Nil(t, n.SizeOf, "SizeOf is not set on an inherited size field")
	assert.Same(t, n, a.Fields[0].SizeField)
	assert.Same(t, a.Fields[0], a.SizedBy(n))
	assert.Same(t, b.Fields[1], b.SizedBy(n))
	assert.Nil(t, p.SizedBy(n))
}

func TestParseFiles(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		wantErr string
	}{
		{
			name: "valid",
			files: map[string]string{
				"a.idl": "scope a { struct A { int8 x; } }",
				"b.idl": "scope b { struct B extends a::A { int8 y; } }",
			},
		},
		{
			name: "parse errors of every file",
			files: map[string]string{
				"a.idl": "scope a { struct A { int8 x } }",
				"b.idl": "scope b {",
			},
			wantErr: "a.idl:1:29: expected ';' after field \"x\", found '}'\n",
		},
		{
			name:    "check errors",
			files:   map[string]string{"a.idl": "scope a { struct A { Nope x; } }"},
			wantErr: `a.idl:1:22: unknown type "Nope"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			for _, name := range []string{"a.idl", "b.idl"} {
				if src, ok := tt.files[name]; ok {
					path := filepath.Join(dir, name)
					require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
					paths = append(paths, path)
				}
			}
			files, err := ParseFiles(paths...)
			if tt.wantErr == "" {
				require.NoError(t, err)
				assert.Len(t, files, len(paths))
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), filepath.Join(dir, tt.wantErr))
			assert.Nil(t, files)
		})
	}
	_, err := ParseFiles(filepath.Join(t.TempDir(), "missing.idl"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
