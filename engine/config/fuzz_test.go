package config_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/engine/config"
)

var writeCorpus = flag.Bool("write-corpus", false, "write testdata/*.yaml as the committed seed corpus under testdata/fuzz")

// errorLine is the shape of every line of a load error.
var errorLine = regexp.MustCompile(`^fuzz\.yaml:[1-9][0-9]*: `)

// FuzzLoad feeds arbitrary bytes to Load. It must never panic, and every
// error must be one file:line: … line per problem.
func FuzzLoad(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for i, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
		if *writeCorpus {
			dir := filepath.Join("testdata", "fuzz", f.Name())
			if err := os.MkdirAll(dir, 0o755); err != nil {
				f.Fatal(err)
			}
			entry := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", src)
			seed := fmt.Sprintf("seed-%d-%s", i, strings.TrimSuffix(filepath.Base(name), ".yaml"))
			if err := os.WriteFile(filepath.Join(dir, seed), []byte(entry), 0o644); err != nil {
				f.Fatal(err)
			}
		}
	}
	s := testSchema(f)
	vars := env(map[string]string{"PORT": "8080", "HOST": "localhost"})
	f.Fuzz(func(t *testing.T, src []byte) {
		cfg, err := config.Load("fuzz.yaml", src, s, vars)
		if err == nil {
			if cfg == nil {
				t.Fatal("nil config without an error")
			}
			for _, b := range cfg.Bindings {
				var v any
				if err := b.Options.Decode(&v); err != nil {
					t.Fatalf("options of %s validated but do not decode: %v", b.Name, err)
				}
				var strict struct{ Port int }
				checkLines(t, b.Options.Decode(&strict))
			}
			return
		}
		checkLines(t, err)
	})
}

func checkLines(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var list *config.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error is not an ErrorList: %T %v", err, err)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(list.Errors()) || len(lines) == 0 {
		t.Fatalf("%d problems printed on %d lines:\n%s", len(list.Errors()), len(lines), err)
	}
	for _, line := range lines {
		if !errorLine.MatchString(line) {
			t.Fatalf("error line without file:line: prefix: %q", line)
		}
	}
}

// TestSeedCorpus checks that the committed seed corpus covers every
// testdata file.
func TestSeedCorpus(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	seeds, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzLoad", "seed-*"))
	if err != nil || len(seeds) < len(files) {
		t.Errorf("FuzzLoad seed corpus incomplete (go test ./engine/config -run FuzzLoad -write-corpus): %d seeds for %d files", len(seeds), len(files))
	}
}
