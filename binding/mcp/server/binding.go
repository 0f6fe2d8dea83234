package server

import (
	"fmt"
	"sync"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine"
)

func init() {
	binding.RegisterKind(binding.Kind{
		Type: "mcp",
		Kind: "server",
		New:  func() engine.Binding { return &Binding{tables: map[tableKey]*sessionTable{}} },
	})
}

// Binding is the mcp server kind: MCP Streamable HTTP behind an http
// server binding.
//
// The factory is process-wide, shared by every engine of the process (tests
// run several at once), so the session tables it keeps are per engine and
// per configured binding: a session created on one worker is found from
// every worker of the same engine, and never from another engine.
type Binding struct {
	mu     sync.Mutex
	tables map[tableKey]*sessionTable
}

type tableKey struct {
	e  *engine.Engine
	id int64
}

// Attach compiles the configuration for one worker.
func (b *Binding) Attach(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error) {
	if cfg.ExitID == 0 {
		return nil, fmt.Errorf("mcp %s: a server needs an exit, the application behind it", cfg.Name)
	}
	s, err := compile(cfg)
	if err != nil {
		return nil, err
	}
	return newServer(w, cfg, s, b.table(w.Engine(), cfg.ID, s)), nil
}

// table returns the session table of binding id on engine e, creating it
// on the first worker's Attach; each worker's Detach releases its hold.
func (b *Binding) table(e *engine.Engine, id int64, s *settings) *sessionTable {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := tableKey{e, id}
	t, ok := b.tables[k]
	if !ok {
		t = newSessionTable(s.sequentialIDs)
		t.release = func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			t.refs--
			if t.refs == 0 {
				delete(b.tables, k)
			}
		}
		b.tables[k] = t
	}
	t.refs++
	return t
}

var _ engine.Binding = (*Binding)(nil)
