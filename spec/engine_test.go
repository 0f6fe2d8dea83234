package spec

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/sluicehq/sluice/binding/echo"
)

const engineScenarios = "../scripts/engine/streams/application"

// proxyConfigs names the configuration a scenario runs against when it is
// not proxy.yaml.
var proxyConfigs = map[string]string{
	"signal.deferred.begin": "proxy.delay.yaml",
}

// peerOnly names the scenarios that play peer to peer only, with the
// reason: the test proxy between the scripts would stop them.
var peerOnly = map[string]string{
	"redirect":                 "the test proxy does not forward REDIRECT (TestEngineRedirect plays it without one)",
	"flush.before.begin":       "the engine resets a stream whose FLUSH comes ahead of its BEGIN",
	"reset.before.reply.begin": "through the test proxy, a reply BEGIN sent after the RESET does not reach the client",
}

// oneWorker names the scenarios that play through an engine with one
// worker only, with the reason.
var oneWorker = map[string]string{
	"connects.in.order": "with two workers the connects are served on different workers and reach the exit in either order",
}

// echoScenarios holds pairs whose server script plays what the echo
// binding does; engine-driven, the client script runs against echo.
const echoScenarios = "../scripts/echo/streams/application"

var echoConfig = filepath.Join("..", "scripts", "echo", "config", "echo.yaml")

func engineConfig(name string) string {
	return filepath.Join("..", "scripts", "engine", "config", name)
}

// TestScenariosEngineDriven plays every engine scenario pair through an
// engine: the client script connects to app0, a transparent test proxy,
// and the server script plays app0's exit app1.
func TestScenariosEngineDriven(t *testing.T) {
	dirs := scenarioDirs(t, filepath.Join("..", "scripts"))
	n := 0
	for _, dir := range dirs {
		if !strings.HasPrefix(filepath.ToSlash(dir), engineScenarios+"/") {
			continue
		}
		n++
		name := filepath.Base(dir)
		if peerOnly[name] != "" {
			continue
		}
		for _, workers := range []int{1, 2} {
			if workers > 1 && oneWorker[name] != "" {
				continue
			}
			t.Run(name+"/workers="+string(rune('0'+workers)), func(t *testing.T) {
				t.Parallel()
				cfg := proxyConfigs[name]
				if cfg == "" {
					cfg = "proxy.yaml"
				}
				start := time.Now()
				Run(t, Config(engineConfig(cfg), Override("serverAddress", "zilla://streams/app1"), Workers(workers)),
					filepath.Join(dir, "client"), filepath.Join(dir, "server"))
				if name == "signal.deferred.begin" {
					assert.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond, "the proxy's delay signal")
				}
			})
		}
	}
	require.GreaterOrEqual(t, n, 10)
}

// TestScenariosAgainstEcho plays client scripts against the echo binding.
func TestScenariosAgainstEcho(t *testing.T) {
	n := 0
	for _, dir := range scenarioDirs(t, filepath.Join("..", "scripts")) {
		if !strings.HasPrefix(filepath.ToSlash(dir), echoScenarios+"/") {
			continue
		}
		n++
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			Run(t, Config(echoConfig), filepath.Join(dir, "client"))
		})
	}
	require.GreaterOrEqual(t, n, 5)
}

// TestEngineChallengeBeforeWindow checks seed 000's order through the
// engine: the client sees the CHALLENGE its peer advised before connected
// ahead of the WINDOW.
func TestEngineChallengeBeforeWindow(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	trace := func(file string, received bool, f frame) {
		if received && strings.HasSuffix(file, "client.rpt") {
			mu.Lock()
			seen = append(seen, f.kind.String())
			mu.Unlock()
		}
	}
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), traceKey{}, trace), 5*time.Second)
	defer cancel()
	dir := filepath.Join(engineScenarios, "challenge.before.window")
	err := Play(ctx, Config(engineConfig("proxy.yaml"), Override("serverAddress", "zilla://streams/app1")),
		filepath.Join(dir, "client"), filepath.Join(dir, "server"))
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(seen), 3)
	assert.Equal(t, []string{"CHALLENGE", "WINDOW", "BEGIN"}, seen[:3])
}

// TestEngineFailureNamesLine checks an engine-driven failure: the frame
// observed comes from the engine, with its stream id.
func TestEngineFailureNamesLine(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := PlaySources(ctx, Config(echoConfig), source(t, "client.rpt", `connect "zilla://streams/app0"
connected
write "hello"
read "help!"
`))
	require.Error(t, err)
	assert.Regexp(t, `client.rpt:4: expected DATA "help!", observed DATA "hello"`, err.Error())
}

// TestEngineDataCutToFrame: a write larger than the engine's largest
// frame goes as several DATA however much credit the binding grants,
// and comes back whole; a write the script asks to send as one frame
// that no frame holds fails at its line.
func TestEngineDataCutToFrame(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := PlaySources(ctx, Config(echoConfig), source(t, "client.rpt", `connect "zilla://streams/app0"
        option zilla:window 1048576
connected
write ${core:randomBase64(100000)}
read ${core:randomBase64(100000)}
`))
	require.NoError(t, err)

	err = PlaySources(ctx, Config(echoConfig), source(t, "client.rpt", `connect "zilla://streams/app0"
        option zilla:transmission "half-duplex"
        option zilla:throttle "message"
connected
write ${core:randomBase64(100000)}
`))
	require.Error(t, err)
	assert.Regexp(t, `client.rpt:5: cannot send DATA of 133336 bytes: one frame holds at most \d+`, err.Error())
}

func TestEngineUnknownBinding(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := PlaySources(ctx, Config(echoConfig), source(t, "client.rpt", `connect "zilla://streams/nope"
connected
`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `client.rpt:2: connect zilla://streams/nope: the configuration has no binding named "nope"`)
}

func source(t *testing.T, name, src string) *Source {
	t.Helper()
	s, err := Parse(name, []byte(src))
	require.NoError(t, err)
	return &Source{Script: s, Src: []byte(src)}
}

// TestEngineExternal declares app1, the exit of proxy.yaml's app0, as
// external without a script accepting it: the configuration loads only
// with the declaration, and a stream routed to app1 is refused, so the
// client's connect is aborted.
func TestEngineExternal(t *testing.T) {
	client := `connect "zilla://streams/app0"
connect aborted
`
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := PlaySources(ctx, Config(engineConfig("proxy.yaml")), source(t, "client.rpt", client))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `bindings.app0.exit: no binding named "app1"`)

	err = PlaySources(ctx, Config(engineConfig("proxy.yaml"), External("app1")), source(t, "client.rpt", client))
	require.NoError(t, err)
}

// TestEngineRedirect plays the redirect scenario through the engine's
// rings with no binding between the scripts: the client connects straight
// to the external binding the server script plays.
func TestEngineRedirect(t *testing.T) {
	dir := filepath.Join(engineScenarios, "redirect")
	Run(t, Config(engineConfig("proxy.yaml"),
		Override("serverAddress", "zilla://streams/app1"), Override("clientAddress", "zilla://streams/app1")),
		filepath.Join(dir, "client"), filepath.Join(dir, "server"))
}

// TestEngineStreamID checks option zilla:streamId: the connect's BEGIN
// carries the fixed initial id, so the reply comes back on its reply id.
func TestEngineStreamID(t *testing.T) {
	var mu sync.Mutex
	var replies []int64
	trace := func(file string, received bool, f frame) {
		if received && f.kind == frameBegin {
			mu.Lock()
			replies = append(replies, f.stream)
			mu.Unlock()
		}
	}
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), traceKey{}, trace), 5*time.Second)
	defer cancel()
	err := PlaySources(ctx, Config(echoConfig, Workers(1)), source(t, "client.rpt", `connect "zilla://streams/app0"
        option zilla:streamId 0x7f001L
connected
write "hi"
read "hi"
`))
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []int64{0x7f000}, replies)
}
