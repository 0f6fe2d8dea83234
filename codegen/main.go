package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sluicehq/sluice/idl"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("codegen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var deps multiFlag
	idlPath := fs.String("idl", "", "IDL file to generate Go for (required)")
	fs.Var(&deps, "dep", "IDL file the generated one refers to (repeatable)")
	out := fs.String("out", ".", "output directory")
	pkg := fs.String("pkg", "", "Go package name (default: the output directory's name)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *idlPath == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: codegen -idl FILE [-dep FILE]... [-out DIR] [-pkg NAME]")
		return 2
	}
	if err := generateFile(*idlPath, deps, *out, *pkg); err != nil {
		fmt.Fprintln(stderr, "codegen:", err)
		return 1
	}
	return 0
}

func generateFile(idlPath string, deps []string, outDir, pkg string) error {
	target, err := parseFile(idlPath)
	if err != nil {
		return err
	}
	files := []*idl.File{target}
	for _, d := range deps {
		f, err := parseFile(d)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	if err := idl.Check(files...); err != nil {
		return err
	}
	if pkg == "" {
		abs, err := filepath.Abs(outDir)
		if err != nil {
			return err
		}
		pkg = filepath.Base(abs)
	}
	src, err := Generate(target, Options{Package: pkg, Source: sourceName(idlPath)})
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(filepath.Base(idlPath), filepath.Ext(idlPath))
	outPath := filepath.Join(outDir, base+"_gen.go")
	if old, err := os.ReadFile(outPath); err == nil && string(old) == string(src) {
		return nil
	}
	return os.WriteFile(outPath, src, 0o644)
}

func parseFile(path string) (*idl.File, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return idl.Parse(sourceName(path), src)
}

// sourceName names an IDL file relative to the module root (idl/core.idl),
// so headers and error positions do not depend on where codegen ran.
func sourceName(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if rel, err := filepath.Rel(dir, abs); err == nil {
				return filepath.ToSlash(rel)
			}
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			break
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	return filepath.ToSlash(path)
}
