package idl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse feeds arbitrary sources to Parse and, when they parse, to Check
// together with testdata/core.idl (so inputs can refer to core types). It
// must never panic, and every error must carry a position.
func FuzzParse(f *testing.F) {
	// The test inputs, plus the repository's IDL files beside this test.
	seeds, err := filepath.Glob(filepath.Join("testdata", "*.idl"))
	if err != nil {
		f.Fatal(err)
	}
	repo, err := filepath.Glob("*.idl")
	if err != nil {
		f.Fatal(err)
	}
	seeds = append(seeds, repo...)
	for _, path := range seeds {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	coreSrc, err := os.ReadFile(filepath.Join("testdata", "core.idl"))
	if err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := Parse("fuzz.idl", src)
		if err != nil {
			if file != nil {
				t.Fatalf("Parse returned a file with error %v", err)
			}
			requirePositioned(t, err, "fuzz.idl")
			return
		}
		core, err := Parse("core.idl", coreSrc)
		if err != nil {
			t.Fatal(err)
		}
		err1 := Check(core, file)
		if err1 != nil {
			requirePositioned(t, err1, "fuzz.idl", "core.idl")
		}
		// Check is repeatable: a second run reports the same.
		if err2 := Check(core, file); errString(err1) != errString(err2) {
			t.Fatalf("second Check differs:\n%v\nvs\n%v", err1, err2)
		}
		for _, d := range file.Decls() {
			_ = QualifiedName(d)
			if s, ok := d.(*Struct); ok && err1 == nil {
				_ = s.AllFields()
			}
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// requirePositioned fails unless err is a non-empty ErrorList whose errors
// all have a position in one of files and a message.
func requirePositioned(t *testing.T, err error, files ...string) {
	t.Helper()
	var list ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		t.Fatalf("error is not a non-empty ErrorList: %#v", err)
	}
	for _, e := range list {
		known := false
		for _, f := range files {
			known = known || e.Pos.File == f
		}
		if !known || e.Pos.Line < 1 || e.Pos.Col < 1 || e.Msg == "" {
			t.Fatalf("error without a proper position or message: %q (pos %+v)", e.Error(), e.Pos)
		}
	}
}

// TestPathologicalInputs runs inputs that stress recursion and chains.
// None may panic; all errors must be positioned.
func TestPathologicalInputs(t *testing.T) {
	chain := func(n int, format string) string {
		var b strings.Builder
		b.WriteString("scope s {\n")
		for i := range n {
			fmt.Fprintf(&b, format, i, i+1)
			b.WriteByte('\n')
		}
		b.WriteString("}\n")
		return b.String()
	}
	garbage := make([]byte, 1<<20)
	for i := range garbage {
		garbage[i] = byte(i*7919 + i>>8)
	}
	tests := []struct {
		name  string
		src   string
		valid bool
		msg   string // a substring of the errors, when set
	}{
		{name: "deep scopes", src: strings.Repeat("scope s {", 100_000)},
		{name: "deep scopes at the limit", src: strings.Repeat("scope s {", MaxScopeDepth) + strings.Repeat("}", MaxScopeDepth), valid: true},
		{name: "huge number", src: "scope s { struct S { int8 a = " + strings.Repeat("9", 10_000) + "; } }"},
		{name: "long string", src: "scope s { struct S { string32 a = \"" + strings.Repeat("x", 1<<20) + "\"; } }", valid: true},
		{name: "binary garbage", src: string(garbage)},
		{name: "garbage after a scope", src: "scope s { }" + string(garbage)},
		{name: "typedef chain at the limit", src: chain(MaxChainLength-1, "typedef T%[2]d as T%[1]d;") + "scope s { typedef int8 as T63; }", valid: true},
		{name: "long typedef chain", src: chain(20_000, "typedef T%[2]d as T%[1]d;") + "scope s { typedef int8 as T20000; }", msg: "starts a chain of more than 64 typedefs"},
		{name: "typedef cycle through a long chain", src: chain(20_000, "typedef T%[2]d as T%[1]d;") + "scope s { typedef T0 as T20000; }", msg: "typedef cycle: T0 -> T1 -> T2"},
		{name: "extends chain at the limit", src: chain(MaxChainLength, "struct S%[1]d extends S%[2]d { int8 f%[1]d; }") + "scope s { struct S64 { octets[4] x; } }", valid: true},
		{name: "long extends chain", src: chain(20_000, "struct S%[1]d extends S%[2]d { int8 f%[1]d; }") + "scope s { struct S20000 { octets[4] x; } }", msg: "has more than 64 ancestors through extends"},
		{name: "extends cycle through a long chain", src: chain(20_000, "struct S%[1]d extends S%[2]d { int8 f%[1]d; }") + "scope s { struct S20000 extends S0 { } }", msg: "struct extends cycle: S0 -> S1"},
		{name: "many children of a wide parent", src: wideParent(20_000), valid: true},
		{name: "long containment chain", src: chain(20_000, "struct S%[1]d { S%[2]d next; }") + "scope s { struct S20000 { int8 x; } }", valid: true},
		{name: "containment cycle through a long chain", src: chain(20_000, "struct S%[1]d { S%[2]d next; }") + "scope s { struct S20000 { S0 loop; } }", msg: "contains itself by value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("p.idl", []byte(tt.src))
			if err == nil {
				err = Check(f)
			}
			if tt.valid {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			requirePositioned(t, err, "p.idl")
			require.Contains(t, err.Error(), tt.msg)
		})
	}
}

// wideParent declares a struct of n fields and n structs extending it, each
// sizing octets by the last inherited field.
func wideParent(n int) string {
	var b strings.Builder
	b.WriteString("scope s {\n struct P {")
	for i := range n {
		fmt.Fprintf(&b, " int8 p%d;", i)
	}
	b.WriteString(" int32 size; }\n")
	for i := range n {
		fmt.Fprintf(&b, " struct C%d extends P { octets[size] c = null; }\n", i)
	}
	b.WriteString("}\n")
	return b.String()
}
