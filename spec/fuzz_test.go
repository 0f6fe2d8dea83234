package spec_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/spec"
)

// FuzzParse feeds arbitrary sources to Parse. It must never panic; a
// failure must be a non-empty ErrorList positioned inside the source; a
// success must print as a script that parses and prints the same again.
// Seeds are the scripts in testdata, plus the corpus in
// testdata/fuzz/FuzzParse (crashers found earlier among them).
func FuzzParse(f *testing.F) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".rpt") {
			continue
		}
		src, err := os.ReadFile(filepath.Join("testdata", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}

	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := spec.Parse("fuzz.rpt", src)
		lines := bytes.Count(src, []byte("\n")) + 1
		if err != nil {
			if s != nil {
				t.Fatalf("Parse returned a script with error %v", err)
			}
			var list spec.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not a non-empty ErrorList: %#v", err)
			}
			for _, e := range list {
				if e.Pos.File != "fuzz.rpt" || e.Pos.Line < 1 || e.Pos.Line > lines || e.Pos.Col < 1 || e.Msg == "" {
					t.Fatalf("error without a proper position or message: %q (pos %+v)", e.Error(), e.Pos)
				}
				_ = spec.Excerpt(src, e.Pos.Line, 2)
			}
			return
		}
		for _, w := range s.Warnings {
			if w.Pos.File != "fuzz.rpt" || w.Pos.Line < 1 || w.Pos.Line > lines || w.Pos.Col < 1 || w.Msg == "" {
				t.Fatalf("warning without a proper position or message: %q (pos %+v)", w.Error(), w.Pos)
			}
		}
		printed := s.String()
		again, err := spec.Parse("printed.rpt", []byte(printed))
		if err != nil {
			t.Fatalf("printed script does not parse: %v\n%s", err, printed)
		}
		if got := again.String(); got != printed {
			t.Fatalf("printed script prints differently when parsed again:\n%s\nvs\n%s", printed, got)
		}
	})
}
