package proxy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/spec"
)

// cutReply is a resources/read result whose uris are of every shape the
// proxy tells apart: ui:// (prefix in the authority), ui:\/\/ (slashes
// escaped), a near miss of each, another scheme and an empty uri.
const (
	cutReply = `{"contents":[{"uri":"ui://w/v.html","text":"1"},{"uri":"ui:\/\/w/v.html","text":"2"},` +
		`{"uri":"ui:/w","text":"3"},{"uri":"ui:\/w","text":"4"},{"uri":"urn:x","text":"5"},{"uri":"","text":"6"},{"uri":"u","text":"7"}]}`
	cutWant = `{"contents":[{"uri":"ui://everything+w/v.html","text":"1"},{"uri":"ui:\/\/everything+w/v.html","text":"2"},` +
		`{"uri":"everything+ui:/w","text":"3"},{"uri":"everything+ui:\/w","text":"4"},{"uri":"everything+urn:x","text":"5"},{"uri":"everything+","text":"6"},{"uri":"everything+u","text":"7"}]}`
)

// TestResultURIsCutAnywhere plays resources.read.app.prefixed with the
// route answering cutReply instead, its reply cut in two at every byte,
// and cut into single bytes: wherever a DATA ends, within a uri's scheme
// or not, each uri gets the route's prefix where the whole reply would
// have it.
func TestResultURIsCutAnywhere(t *testing.T) {
	cfg := filepath.Join(scripts, "config", "proxy.yaml")
	dir := filepath.Join(proxyDir, "resources.read.app.prefixed")
	down := readScript(t, filepath.Join(dir, "downstream.rpt"))
	routes := readScript(t, filepath.Join(dir, "routes.rpt"))
	// The downstream's read of the result, and the route's writes of it.
	down = replaceBetween(t, down, "read '{\"contents\"", "read closed", "read "+rptString(cutWant)+"\n")
	every := []int{}
	for i := 1; i < len(cutReply); i++ {
		every = append(every, i)
	}
	cuts := [][]int{every}
	for i := 1; i < len(cutReply); i++ {
		cuts = append(cuts, []int{i})
	}
	for _, cut := range cuts {
		var writes strings.Builder
		last := 0
		for _, c := range append(cut, len(cutReply)) {
			writes.WriteString("write " + rptString(cutReply[last:c]) + "\nwrite flush\n")
			last = c
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := spec.PlaySources(ctx, spec.Config(cfg, spec.Workers(1)),
			cutSource(t, "downstream.rpt", down),
			cutSource(t, "routes.rpt", replaceBetween(t, routes, "write '{\"contents\"", "write close", writes.String())))
		cancel()
		at := fmt.Sprint(cut)
		if len(cut) > 1 {
			at = "every byte"
		}
		require.NoError(t, err, "reply cut at %s", at)
	}
}

func readScript(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// replaceBetween replaces the text of s from the first from up to the
// first to after it with with.
func replaceBetween(t *testing.T, s, from, to, with string) string {
	i := strings.Index(s, from)
	require.GreaterOrEqual(t, i, 0, "%q", from)
	j := strings.Index(s[i:], to)
	require.GreaterOrEqual(t, j, 0, "%q", to)
	return s[:i] + with + s[i+j:]
}

func cutSource(t *testing.T, name, text string) *spec.Source {
	s, err := spec.Parse(name, []byte(text))
	require.NoError(t, err, text)
	return &spec.Source{Script: s, Src: []byte(text)}
}

// rptString quotes s as a script's byte string.
func rptString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
