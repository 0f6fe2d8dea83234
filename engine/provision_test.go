package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/frame"
)

// provisioner is one process-wide factory shared by every engine of a
// test. It logs each lifecycle step as "<step> <engine>.<binding>", with
// the worker for Attach and Detach, and checks that each step sees the
// state its engine's Provision returned.
type provisioner struct {
	mu    sync.Mutex
	log   []string
	fail  string // a binding whose Provision fails
	clean error  // what Cleanup returns
}

// provisioned is the state Provision returns for one engine's binding.
type provisioned struct {
	p        *provisioner
	e        *engine.Engine
	name     string
	attached int // workers that hold the state, counted under p.mu
	cleaned  bool
}

func (p *provisioner) record(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log = append(p.log, fmt.Sprintf(format, args...))
}

func (p *provisioner) steps() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

func (p *provisioner) Provision(e *engine.Engine, cfg *engine.BindingConfig) (any, error) {
	if cfg.Name == p.fail {
		return nil, errors.New("no such table")
	}
	p.record("provision %s.%s", cfg.Namespace, cfg.Name)
	return &provisioned{p: p, e: e, name: cfg.Name}, nil
}

func (p *provisioner) Attach(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error) {
	s, ok := cfg.State().(*provisioned)
	if !ok || s.e != w.Engine() || s.name != cfg.Name {
		return nil, fmt.Errorf("attach %s on worker %d: state %v is not this engine's", cfg.Name, w.Index(), cfg.State())
	}
	p.mu.Lock()
	s.attached++
	p.mu.Unlock()
	p.record("attach %s.%s %d", cfg.Namespace, cfg.Name, w.Index())
	return &provisionedHandler{s: s, w: w, cfg: cfg}, nil
}

type provisionedHandler struct {
	s   *provisioned
	w   *engine.Worker
	cfg *engine.BindingConfig
}

func (h *provisionedHandler) NewStream(frame.FrameType, []byte) engine.MessageConsumer { return nil }

func (h *provisionedHandler) Detach() {
	h.s.p.mu.Lock()
	h.s.attached--
	h.s.p.mu.Unlock()
	h.s.p.record("detach %s.%s %d", h.cfg.Namespace, h.cfg.Name, h.w.Index())
}

func (s *provisioned) Cleanup() error {
	s.p.mu.Lock()
	attached, cleaned := s.attached, s.cleaned
	s.cleaned = true
	s.p.mu.Unlock()
	s.p.record("cleanup %s attached=%d again=%v", s.name, attached, cleaned)
	return s.p.clean
}

// provisionConfig configures two bindings of the provisioner's type.
func provisionConfig(name string) *config.Config {
	return &config.Config{Name: name, Bindings: []*config.Binding{
		{Name: "a", Type: "prov", Kind: "server"},
		{Name: "b", Type: "prov", Kind: "server"},
	}}
}

func newProvisioned(t *testing.T, p *provisioner, name string) *engine.Engine {
	t.Helper()
	e, err := engine.New(provisionConfig(name), engine.WithWorkers(2), engine.WithRingCapacity(1<<16),
		engine.WithPin(false), engine.WithLogger(quiet), engine.WithBindings(func(string) (engine.Binding, error) { return p, nil }))
	require.NoError(t, err)
	return e
}

func stopNow(t *testing.T, e *engine.Engine) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return e.Stop(ctx)
}

// TestProvisionPerEngine runs two engines of one factory at once: each
// configured binding is provisioned once per engine, before any worker
// attaches it, every worker's Attach gets that engine's state, and
// Cleanup runs once, after every worker has detached it, on Detach or
// on Stop.
func TestProvisionPerEngine(t *testing.T) {
	p := &provisioner{}
	e1, e2 := newProvisioned(t, p, "one"), newProvisioned(t, p, "two")
	require.NoError(t, e1.Start())
	require.NoError(t, e2.Start())

	require.NoError(t, e1.Detach("a"))
	require.NoError(t, stopNow(t, e1))
	require.NoError(t, stopNow(t, e2))

	for _, ns := range []string{"one", "two"} {
		var mine []string
		for _, step := range p.steps() {
			if verb, name, _ := strings.Cut(step, " "); verb != "cleanup" && strings.HasPrefix(name, ns+".") {
				mine = append(mine, step)
			}
		}
		t.Run(ns, func(t *testing.T) {
			// Both bindings are provisioned before either is attached.
			require.GreaterOrEqual(t, len(mine), 2)
			assert.ElementsMatch(t, []string{"provision " + ns + ".a", "provision " + ns + ".b"}, mine[:2])
			for _, b := range []string{"a", "b"} {
				n := 0
				for _, step := range mine {
					if step == "provision "+ns+"."+b {
						n++
					}
				}
				assert.Equal(t, 1, n, "provisions of %s.%s", ns, b)
			}
			assert.Len(t, mine, 2+4+4, "two provisions, four attaches, four detaches")
		})
	}
	var cleanups []string
	for _, step := range p.steps() {
		if strings.HasPrefix(step, "cleanup ") {
			cleanups = append(cleanups, step)
		}
	}
	// Each engine's two states, each once and with no worker left
	// attached.
	assert.Equal(t, []string{
		"cleanup a attached=0 again=false", "cleanup b attached=0 again=false",
		"cleanup b attached=0 again=false", "cleanup a attached=0 again=false",
	}, cleanups)
}

// TestProvisionErrors checks that a failed Provision fails Start naming
// the binding, after cleaning up what was provisioned, and that a
// Cleanup's error reaches Stop's caller.
func TestProvisionErrors(t *testing.T) {
	for _, tt := range []struct {
		name     string
		p        *provisioner
		startErr string
		stopErr  string
		steps    []string
	}{
		{
			name:     "provision fails",
			p:        &provisioner{fail: "b"},
			startErr: "test.b: no such table",
			steps:    []string{"provision test.a", "cleanup a attached=0 again=false"},
		},
		{
			name:    "cleanup fails",
			p:       &provisioner{clean: errors.New("table busy")},
			stopErr: "test.a: cleanup: table busy",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newProvisioned(t, tt.p, "test")
			err := e.Start()
			if tt.startErr != "" {
				require.EqualError(t, err, tt.startErr)
				assert.Equal(t, tt.steps, tt.p.steps())
				return
			}
			require.NoError(t, err)
			assert.ErrorContains(t, stopNow(t, e), tt.stopErr)
		})
	}
}
