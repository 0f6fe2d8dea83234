package mcp

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/sluicehq/sluice/engine"
)

// KindFunc attaches a binding of one mcp kind to one worker.
type KindFunc func(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error)

var (
	kindsMu sync.Mutex
	kinds   = map[string]KindFunc{}
)

// RegisterKind makes kind (proxy or client) attachable. The proxy and
// client kinds live in their own packages (binding/mcp/mcpproxy and
// binding/mcp/mcpclient), which register themselves from init; this
// package serves the server kind and owns the type's registration, its
// options schema and the generated extensions all three share.
func RegisterKind(kind string, f KindFunc) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if _, dup := kinds[kind]; dup {
		panic("mcp: kind " + kind + " registered twice")
	}
	kinds[kind] = f
}

func kindFunc(kind string) (KindFunc, bool) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	f, ok := kinds[kind]
	return f, ok
}

// whenSchema is one item of a proxy route's when: the toolkit the route
// serves (its prefix) and which of that toolkit's tools, prompts and
// resources it exposes, each a glob or a list of globs.
var whenSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["toolkit"],
  "properties": {
    "toolkit": {"type": "string", "pattern": "^[A-Za-z0-9_-]+$"},
    "tool": {
      "oneOf": [
        {"type": "string", "minLength": 1},
        {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}}
      ]
    },
    "prompt": {
      "oneOf": [
        {"type": "string", "minLength": 1},
        {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}}
      ]
    },
    "resource": {
      "oneOf": [
        {"type": "string", "minLength": 1},
        {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}}
      ]
    }
  }
}`)

// attachKind attaches a proxy or client through its registered package.
func attachKind(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error) {
	f, ok := kindFunc(cfg.Kind)
	if !ok {
		return nil, fmt.Errorf("mcp %s: kind %s is not linked in (import binding/mcp/mcp%s)", cfg.Name, cfg.Kind, cfg.Kind)
	}
	return f(w, cfg)
}
