package spec

import (
	"context"
	"errors"
	"fmt"
	"github.com/sluicehq/sluice/binding/test"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
)

// Setup says how Run plays its scripts: peer to peer in memory, against an
// engine started from a configuration, or over real TCP.
type Setup struct {
	mode       mode
	config     string
	properties map[string]any
	roots      map[string]string
	timeout    time.Duration
	workers    int
	logger     *slog.Logger
	external   []string
	settings   map[string]string
	barriers   *Barriers
}

type mode uint8

const (
	peerToPeer mode = iota
	engineDriven
	liveTCP
)

// RunOption adjusts a Setup.
type RunOption func(*Setup)

// PeerToPeer plays the scripts against each other in memory: every connect
// must be accepted by one of them.
func PeerToPeer(opts ...RunOption) Setup { return newSetup(peerToPeer, "", opts) }

// Config starts an engine from the configuration file at path for the
// run. A script accepting zilla://streams/<name> plays the external
// binding <name> (which the configuration names as an exit but does not
// declare), and a script connecting to zilla://streams/<name> opens a
// stream into the configured binding <name>. tcp:// addresses are real
// sockets, for bindings that listen.
func Config(path string, opts ...RunOption) Setup { return newSetup(engineDriven, path, opts) }

// Live plays the scripts over real TCP only, against a server already
// running (such as `sluice start`): tcp://host:port connects dial it and
// accepts listen on it.
func Live(opts ...RunOption) Setup { return newSetup(liveTCP, "", opts) }

func newSetup(m mode, path string, opts []RunOption) Setup {
	s := Setup{mode: m, config: path, properties: map[string]any{}, roots: map[string]string{},
		timeout: RunTimeout, workers: 2}
	for _, o := range opts {
		o(&s)
	}
	return s
}

// External declares bindings that the configuration's exits may name
// although it does not define them, as Zilla's EngineRule.external does:
// the run attaches each one, and a stream routed to it goes to a script
// accepting zilla://streams/<name> or, when none does, is refused. Names a
// script accepts need no declaring.
func External(names ...string) RunOption {
	return func(s *Setup) { s.external = append(s.external, names...) }
}

// Override overrides a script property, as k3po's @ScriptProperty does;
// e.g. Override("serverAddress", "zilla://streams/app1").
func Override(name string, value any) RunOption {
	return func(s *Setup) { s.properties[name] = value }
}

// Root makes alias/<scenario>/<script> name dir/<scenario>/<script>.rpt,
// as Zilla's tests use ${net} and ${app}.
func Root(alias, dir string) RunOption { return func(s *Setup) { s.roots[alias] = dir } }

// WithBarriers shares the run's barriers with the caller (see [Barriers]).
func WithBarriers(b *Barriers) RunOption { return func(s *Setup) { s.barriers = b } }

// Timeout bounds the run (RunTimeout by default).
func Timeout(d time.Duration) RunOption { return func(s *Setup) { s.timeout = d } }

// Workers sets the engine's workers (2 by default).
func Workers(n int) RunOption { return func(s *Setup) { s.workers = n } }

// Setting sets an engine setting for an engine-driven run (Config), as
// Zilla's tests pin one with EngineRule.configure; e.g.
// Setting("mcp.session.id", "5ca1ab1e-c0de-4a11-b0a7-000100000000") so that
// scripts can expect the id the server mints. The engine refuses names no
// binding declares ([engine.Setting]).
func Setting(name, value string) RunOption {
	return func(s *Setup) {
		if s.settings == nil {
			s.settings = map[string]string{}
		}
		s.settings[name] = value
	}
}

// Logger receives the engine's logs (discarded by default).
func Logger(l *slog.Logger) RunOption { return func(s *Setup) { s.logger = l } }

// RunTimeout bounds a run when no Timeout is given and the test has no
// closer deadline.
const RunTimeout = 10 * time.Second

// Run plays the named scripts with setup and fails t with the first
// failure. A name is a path to a .rpt file (the extension may be left
// off), alias/<rest> for a Root alias, or a path under the repository's
// scripts/ directory.
//
//	spec.Run(t, spec.Config("server.yaml", spec.Root("net", dir)), "net/x/client", "app/x/server")
func Run(t testing.TB, setup Setup, names ...string) {
	t.Helper()
	timeout := setup.timeout
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if td, ok := d.Deadline(); ok && time.Until(td)-100*time.Millisecond < timeout {
			timeout = time.Until(td) - 100*time.Millisecond
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := Play(ctx, setup, names...); err != nil {
		t.Fatal(err)
	}
}

// Play is Run without a testing.TB: it returns the run's error.
func Play(ctx context.Context, setup Setup, names ...string) error {
	if len(names) == 0 {
		return errors.New("spec: no scripts to run")
	}
	var sources []*Source
	for _, name := range names {
		path, err := setup.resolve(name)
		if err != nil {
			return err
		}
		src, err := ReadFile(path)
		if err != nil {
			return err
		}
		sources = append(sources, src)
	}
	return PlaySources(ctx, setup, sources...)
}

// ReadFile reads and parses the script at path. A parse error carries the
// first error's excerpt.
func ReadFile(path string) (*Source, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Parse(path, src)
	if err != nil {
		var list ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			return nil, fmt.Errorf("%w\n%s", err, Excerpt(src, list[0].Pos.Line, 2))
		}
		return nil, err
	}
	return &Source{Script: s, Src: src}, nil
}

// PlaySources plays parsed scripts with setup.
func PlaySources(ctx context.Context, setup Setup, sources ...*Source) error {
	if len(setup.settings) > 0 && setup.mode != engineDriven {
		return errors.New("spec: engine settings apply only to a run against an engine (Config)")
	}
	if setup.barriers != nil {
		ctx = context.WithValue(ctx, barriersKey{}, setup.barriers)
	}
	switch setup.mode {
	case peerToPeer:
		return playScripts(ctx, newMemNetwork(), nil, setup.properties, sources)
	case liveTCP:
		return playScripts(ctx, newTCPNetwork(), nil, setup.properties, sources)
	}
	return setup.playEngine(ctx, sources)
}

// playEngine starts an engine from the setup's configuration, with an
// external binding for each zilla:// name the scripts accept, and plays
// the scripts on it.
func (setup Setup) playEngine(ctx context.Context, sources []*Source) error {
	labels := engine.NewLabels()
	externals, err := acceptedNames(sources, setup.properties, labels.Supply)
	if err != nil {
		return err
	}
	accepted := slices.Clone(externals)
	for _, name := range setup.external {
		if !slices.Contains(externals, name) {
			externals = append(externals, name)
		}
	}
	slices.Sort(externals)
	test.Register()
	schema, err := config.NewSchema(append(binding.Fragments(), engine.ComponentFragments()...)...)
	if err != nil {
		return err
	}
	// Zilla's spec configs may use its test engine's ${{ test.… }} resolver.
	cfg, err := config.LoadFile(setup.config, schema, config.WithExternal(externals...),
		config.WithResolver("test", config.TestResolver))
	if err != nil {
		return err
	}
	if err := binding.Resolve(cfg); err != nil {
		return err
	}
	logger := setup.logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	zn := newEngineNetwork()
	opts := []engine.Option{
		engine.WithWorkers(setup.workers), engine.WithRingCapacity(1 << 20), engine.WithPin(false),
		engine.WithLogger(logger), engine.WithBindings(binding.Factory), engine.WithLabels(labels),
	}
	for name, value := range setup.settings {
		opts = append(opts, engine.WithSetting(name, value))
	}
	e, err := engine.New(cfg, append(opts, zn.externals(externals, accepted)...)...)
	if err != nil {
		return err
	}
	if err := e.Start(); err != nil {
		return err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = e.Stop(stopCtx)
	}()
	if err := zn.started(e); err != nil {
		return err
	}
	return playScripts(ctx, &mixedNetwork{zilla: zn, tcp: newTCPNetwork()}, labels.Supply, setup.properties, sources)
}

// acceptedNames evaluates the scripts' accept addresses and returns the
// zilla://streams/<name> names, sorted.
func acceptedNames(sources []*Source, props map[string]any, labels func(string) int32) ([]string, error) {
	p := &play{bars: &barriers{m: map[string]chan struct{}{}}}
	seen := map[string]bool{}
	for _, src := range sources {
		sr := &scriptRun{script: src.Script, src: src.Src, play: p,
			env:   &Env{Properties: map[string]any{}, Labels: labels, File: src.Script.File},
			envMu: make(chan struct{}, 1)}
		if err := sr.evalProperties(props); err != nil {
			return nil, err
		}
		for _, st := range src.Script.Streams {
			pl, err := sr.plan(st)
			if err != nil {
				return nil, err
			}
			if name := streamName(transportKey(pl.uri, &pl.opts)); pl.accept && name != "" {
				seen[name] = true
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// mixedNetwork sends zilla:// addresses to the engine and tcp:// ones to
// real sockets.
type mixedNetwork struct {
	zilla *engineNetwork
	tcp   *tcpNetwork
}

func (m *mixedNetwork) dial(ctx context.Context, uri string, o *streamOptions) (conn, error) {
	if strings.HasPrefix(uri, "tcp://") {
		return m.tcp.dial(ctx, uri, o)
	}
	return m.zilla.dial(ctx, uri, o)
}

func (m *mixedNetwork) listen(uri string, o *streamOptions) (listener, error) {
	if strings.HasPrefix(uri, "tcp://") {
		return m.tcp.listen(uri, o)
	}
	return m.zilla.listen(uri, o)
}

func (m *mixedNetwork) close() {
	m.zilla.close()
	m.tcp.close()
}

// resolve finds the script file a name refers to.
func (setup Setup) resolve(name string) (string, error) {
	cands := []string{name}
	if alias, rest, ok := strings.Cut(name, "/"); ok {
		if dir, ok := setup.roots[alias]; ok {
			cands = []string{filepath.Join(dir, rest)}
		}
	}
	if root, err := ScriptsDir(); err == nil && !filepath.IsAbs(name) {
		cands = append(cands, filepath.Join(root, name))
	}
	for _, c := range cands {
		for _, p := range []string{c, c + ".rpt"} {
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("spec: no script %q (looked for %s.rpt)", name, strings.Join(cands, ".rpt, "))
}

// ScriptsDir returns the scripts/ directory of the module the working
// directory is in.
func ScriptsDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "scripts"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("spec: no go.mod above the working directory")
		}
		dir = parent
	}
}
