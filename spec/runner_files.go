package spec

import (
	"context"
	"os"
	"testing"
	"time"
)

// RunFilesTimeout bounds a RunFiles run when the test has no deadline
// closer than it.
const RunFilesTimeout = 10 * time.Second

// RunFiles parses the client and server scripts at the given paths and
// plays them against each other with RunPair, failing t with the parse or
// run error. The run is bounded by RunFilesTimeout, or by the test's
// deadline when that comes first.
func RunFiles(t testing.TB, clientPath, serverPath string) {
	t.Helper()
	client, clientSrc := parseFile(t, clientPath)
	server, serverSrc := parseFile(t, serverPath)
	deadline := time.Now().Add(RunFilesTimeout)
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if td, ok := d.Deadline(); ok && td.Before(deadline) {
			deadline = td.Add(-100 * time.Millisecond)
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if err := RunPair(ctx, client, server, clientSrc, serverSrc); err != nil {
		t.Fatal(err)
	}
}

func parseFile(t testing.TB, path string) (*Script, []byte) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(path, src)
	if err != nil {
		var list ErrorList
		if l, ok := err.(ErrorList); ok && len(l) > 0 {
			list = l
			t.Fatalf("%v\n%s", list[0], Excerpt(src, list[0].Pos.Line, 2))
		}
		t.Fatal(err)
	}
	for _, w := range s.Warnings {
		t.Log(w)
	}
	return s, src
}
