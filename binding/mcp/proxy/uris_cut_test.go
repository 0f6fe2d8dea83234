package proxy_test

import (
	"context"
	"fmt"
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

// TestResultURIsCutAnywhere reads cutReply back through the proxy with
// the route's reply cut in two at every byte, and cut into single bytes:
// wherever a DATA ends, within a uri's scheme or not, each uri gets the
// route's prefix where the whole reply would have it.
func TestResultURIsCutAnywhere(t *testing.T) {
	cfg := filepath.Join(scripts, "config", "proxy.yaml")
	cuts := [][]int{}
	for i := 1; i < len(cutReply); i++ {
		cuts = append(cuts, []int{i})
	}
	every := []int{}
	for i := 1; i < len(cutReply); i++ {
		every = append(every, i)
	}
	cuts = append(cuts, every)
	for _, cut := range cuts {
		name := fmt.Sprint(cut)
		if len(cut) > 1 {
			name = "every byte"
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := spec.PlaySources(ctx, spec.Config(cfg, spec.Workers(1)),
			cutSource(t, "downstream.rpt", cutDownstream),
			cutSource(t, "routes.rpt", cutRoutes(cut)))
		cancel()
		require.NoError(t, err, "reply cut at %s", name)
	}
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

var cutDownstream = `connect "zilla://streams/mcp1"
        option zilla:window 8192
        option zilla:transmission "half-duplex"

write zilla:begin.ext ${mcp:beginEx()
                           .typeId(zilla:id("mcp"))
                           .resourcesRead()
                               .sessionId("s1")
                               .uri("everything+file:///x")
                               .contentLength(30)
                               .build()
                           .build()}
connected
write '{"uri":"everything+file:///x"}'
write close
read zilla:begin.ext ${mcp:matchBeginEx()
                          .typeId(zilla:id("mcp"))
                          .resourcesRead()
                              .sessionId("s1")
                              .build()
                          .build()}
read ` + rptString(cutWant) + `
read closed
`

// cutRoutes is route app1 answering cutReply in DATA frames that end at
// each of cuts.
func cutRoutes(cuts []int) string {
	var b strings.Builder
	b.WriteString(`accept "zilla://streams/app1"
       option zilla:window 8192
       option zilla:transmission "half-duplex"
accepted
read zilla:begin.ext ${mcp:matchBeginEx()
                          .typeId(zilla:id("mcp"))
                          .resourcesRead()
                              .sessionId("s1")
                              .uri("file:///x")
                              .build()
                          .build()}
connected
write zilla:begin.ext ${mcp:beginEx()
                           .typeId(zilla:id("mcp"))
                           .resourcesRead()
                               .sessionId("s1")
                               .uri("file:///x")
                               .build()
                           .build()}
write flush
read '{"uri":"file:///x"}'
read closed
`)
	last := 0
	for _, c := range append(cuts, len(cutReply)) {
		b.WriteString("write " + rptString(cutReply[last:c]) + "\nwrite flush\n")
		last = c
	}
	b.WriteString(`write close
accept "zilla://streams/app0"
       option zilla:window 8192
       option zilla:transmission "half-duplex"
`)
	return b.String()
}
