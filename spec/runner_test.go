package spec

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scenarioDirs walks scripts/*/streams/*/ for folders holding both a
// client.rpt and a server.rpt.
func scenarioDirs(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		has := map[string]bool{}
		for _, e := range entries {
			if e.IsDir() {
				walk(filepath.Join(dir, e.Name()))
			} else {
				has[e.Name()] = true
			}
		}
		if has["client.rpt"] && has["server.rpt"] {
			rel, err := filepath.Rel(root, dir)
			require.NoError(t, err)
			if m, _ := filepath.Match(filepath.Join("*", "streams", "*", "*"), rel); m {
				dirs = append(dirs, dir)
			}
		}
	}
	walk(root)
	return dirs
}

func TestScenariosPeerToPeer(t *testing.T) {
	root := filepath.Join("..", "scripts")
	dirs := scenarioDirs(t, root)
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		t.Run(filepath.ToSlash(rel), func(t *testing.T) {
			t.Parallel()
			RunFiles(t, filepath.Join(dir, "client.rpt"), filepath.Join(dir, "server.rpt"))
		})
	}
}

func runPairSrc(t *testing.T, timeout time.Duration, client, server string) error {
	t.Helper()
	c, err := Parse("client.rpt", []byte(client))
	require.NoError(t, err)
	s, err := Parse("server.rpt", []byte(server))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return RunPair(ctx, c, s, []byte(client), []byte(server))
}

const negClient = `connect "zilla://streams/app0"
        option zilla:window 8192
connected
write "hello"
write close
read closed
`

func TestRunPairPayloadDiffers(t *testing.T) {
	server := `accept "zilla://streams/app0"
       option zilla:window 8192
accepted
connected
read "help!"
read closed
write close
`
	err := runPairSrc(t, 2*time.Second, negClient, server)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `server.rpt:5: expected DATA "help!", observed DATA "hello"`)
	assert.Contains(t, err.Error(), `> 5 | read "help!"`)
	assert.NotContains(t, err.Error(), "client.rpt")
}

func TestRunPairClosedButAborted(t *testing.T) {
	client := `connect "zilla://streams/app0"
connected
write zilla:abort.ext [0x01 0x02]
write abort
`
	server := `accept "zilla://streams/app0"
accepted
connected
read closed
`
	err := runPairSrc(t, 2*time.Second, client, server)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "server.rpt:4: expected END, observed ABORT ext [0x01 0x02]")
	assert.Contains(t, err.Error(), "> 4 | read closed")
}

func TestRunPairNeverReceived(t *testing.T) {
	client := `connect "zilla://streams/app0"
connected
write "hello"
`
	server := `accept "zilla://streams/app0"
accepted
connected
read "hello"
read closed
`
	// In a synctest bubble: the scripts run in memory, on goroutines and
	// channels, so the bubble's clock jumps to the run's deadline once
	// both are blocked, and the run times out at exactly 200 ms.
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		err := runPairSrc(t, 200*time.Millisecond, client, server)
		require.Error(t, err)
		assert.Equal(t, 200*time.Millisecond, time.Since(start))
		assert.Contains(t, err.Error(), "server.rpt:5: timed out waiting for END")
		assert.Contains(t, err.Error(), "> 5 | read closed")
	})
}

func TestRunPairBeginExtMismatch(t *testing.T) {
	client := `connect "zilla://streams/app0"
write zilla:begin.ext ${mcp:beginEx().typeId(zilla:id("mcp")).toolsCall().sessionId("s").name("echo").build().build()}
connected
`
	server := `accept "zilla://streams/app0"
accepted
read zilla:begin.ext ${mcp:matchBeginEx().typeId(zilla:id("mcp")).toolsCall().name("get_weather").build().build()}
connected
`
	err := runPairSrc(t, 2*time.Second, client, server)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "server.rpt:3: expected BEGIN with extension")
	assert.Contains(t, err.Error(), `expected "get_weather", got "echo"`)
	assert.Contains(t, err.Error(), `observed BEGIN ext McpBeginEx{`)
}

func TestRunPairUnsupported(t *testing.T) {
	client := `connect "zilla://streams/app0"
connected
`
	server := `accept "zilla://streams/app0"
accepted
write option mask [0x01 0x02 0x03 0x04]
connected
`
	err := runPairSrc(t, 2*time.Second, client, server)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unsupported command "write option mask" at server.rpt:3`)
}

func TestRunPairAddressMismatch(t *testing.T) {
	err := runPairSrc(t, time.Second, `connect "zilla://streams/app0"
connected
`, `accept "zilla://streams/app1"
accepted
connected
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `client.rpt:1: client connects to "zilla://streams/app0" but the scripts accept "zilla://streams/app1"`)
}

func TestRunPairBarriers(t *testing.T) {
	client := `connect "zilla://streams/app0"
        option zilla:window 4
connected
read await READY
write "abcdefgh"
write notify SENT
read "ok"
`
	server := `accept "zilla://streams/app0"
       option zilla:window 3
accepted
connected
write notify READY
read "abcdefgh"
write await SENT
write "ok"
`
	require.NoError(t, runPairSrc(t, 2*time.Second, client, server))
}

// TestRunBarriersFromOutside notifies a barrier from the test, as k3po's
// notifyBarrier does, and awaits one that a script notifies.
func TestRunBarriersFromOutside(t *testing.T) {
	client := `connect "zilla://streams/app0"
connected
write await ROUTED
write "hello"
read "ok"
read notify DONE
`
	server := `accept "zilla://streams/app0"
accepted
connected
read "hello"
write "ok"
`
	b := NewBarriers()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- PlaySources(ctx, PeerToPeer(WithBarriers(b)), source(t, "client.rpt", client), source(t, "server.rpt", server))
	}()
	b.Notify("ROUTED")
	require.NoError(t, b.Await(ctx, "DONE"))
	require.NoError(t, <-done)
}

// TestRunBarrierNeverNotified shows a script waiting on a barrier nobody
// notifies times out at its line, and Await reports the context's end.
func TestRunBarrierNeverNotified(t *testing.T) {
	client := `connect "zilla://streams/app0"
connected
write await ROUTED
`
	server := `accept "zilla://streams/app0"
accepted
connected
`
	b := NewBarriers()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := PlaySources(ctx, PeerToPeer(WithBarriers(b)), source(t, "client.rpt", client), source(t, "server.rpt", server))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "client.rpt:3: timed out waiting for barrier ROUTED")
	require.Error(t, b.Await(ctx, "ROUTED"))
}

// TestBeginExtBeforeConnectedMismatch: a read zilla:begin.ext before a
// connect's connected is checked when the reply BEGIN arrives, even when
// no later command waits for it, and fails at its own line.
func TestBeginExtBeforeConnectedMismatch(t *testing.T) {
	client := `connect "zilla://streams/app0"
        option zilla:transmission "half-duplex"
read zilla:begin.ext [0x02]
`
	server := `accept "zilla://streams/app0"
        option zilla:transmission "half-duplex"
accepted
connected
write zilla:begin.ext [0x03]
write flush
`
	err := runPairSrc(t, 2*time.Second, client, server)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "client.rpt:3: expected BEGIN with extension [0x02]")
}
