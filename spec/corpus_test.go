package spec_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/spec"
)

// TestZillaCorpus parses every .rpt file under the directory named by
// SLUICE_ZILLA_SCRIPTS, such as a checkout of aklivity/zilla, and checks
// that each one parses and prints back to a script that parses the same.
// It is skipped when the variable is unset: Zilla's scripts are not part of
// this repository.
//
// Files listed (one path suffix a line, # comments allowed) in the file
// named by SLUICE_ZILLA_SCRIPTS_SKIP are expected to fail.
func TestZillaCorpus(t *testing.T) {
	root := os.Getenv("SLUICE_ZILLA_SCRIPTS")
	if root == "" {
		t.Skip("SLUICE_ZILLA_SCRIPTS is not set")
	}
	var skips []string
	if path := os.Getenv("SLUICE_ZILLA_SCRIPTS_SKIP"); path != "" {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				skips = append(skips, line)
			}
		}
	}
	n, failed := 0, 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".rpt") {
			return err
		}
		n++
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		expectFail := false
		for _, s := range skips {
			expectFail = expectFail || strings.HasSuffix(path, s)
		}
		s, err := spec.Parse(path, src)
		switch {
		case err != nil && !expectFail:
			failed++
			t.Errorf("%v", err)
			return nil
		case err == nil && expectFail:
			t.Errorf("%s: parses, but is listed as failing", path)
			return nil
		case err != nil:
			return nil
		}
		for _, w := range s.Warnings {
			t.Logf("warning: %v", w)
		}
		printed := s.String()
		again, err := spec.Parse(path, []byte(printed))
		if err != nil {
			t.Errorf("%s: printed script does not parse: %v\n%s", path, err, printed)
			return nil
		}
		if again.String() != printed {
			t.Errorf("%s: printed script prints differently when parsed again", path)
		}
		return nil
	})
	require.NoError(t, err)
	t.Logf("parsed %d scripts, %d failed", n, failed)
}
