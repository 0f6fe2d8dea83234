package store

import (
	"encoding/json"
	"sync"
	"time"
)

// MemoryType is the type name of the built-in in-memory store.
const MemoryType = "memory"

// memorySchema accepts only an empty options object: the memory store has
// nothing to configure.
const memorySchema = `{
  "type": "object",
  "additionalProperties": false
}`

// sweepInterval is how often a memory or test store on the real clock
// drops expired entries that nobody touches.
var sweepInterval = time.Second

func init() {
	Register(Info{Type: MemoryType, Schema: json.RawMessage(memorySchema), New: newMemory})
}

// memoryTables holds the process's memory store tables by store name, so
// that every Store created under one name shares one table. Each table is
// counted by the Stores that hold it and dropped, with its data, when the
// last one closes.
var memoryTables = struct {
	sync.Mutex
	byName map[string]*sharedTable
}{byName: make(map[string]*sharedTable)}

type sharedTable struct {
	t    *table
	refs int
}

// newMemory creates a memory Store. All Stores of one name share their
// values, locks and watchers, whichever worker attaches them. Each Store
// measures ttls on its own clock, so Stores sharing a name should share a
// clock too; once any of them runs on [SystemClock], the table is swept on
// real time until the last of them closes.
func newMemory(name string, options map[string]any, clock Clock) (Store, error) {
	if err := checkKeys(options); err != nil {
		return nil, err
	}
	if clock == nil {
		clock = SystemClock{}
	}
	memoryTables.Lock()
	st := memoryTables.byName[name]
	if st == nil {
		st = &sharedTable{t: newTable()}
		memoryTables.byName[name] = st
	}
	st.refs++
	if _, onRealClock := clock.(SystemClock); onRealClock {
		st.t.startSweep(sweepInterval)
	}
	memoryTables.Unlock()

	release := func() {
		memoryTables.Lock()
		defer memoryTables.Unlock()
		st.refs--
		if st.refs == 0 {
			st.t.stopSweep()
			delete(memoryTables.byName, name)
		}
	}
	return &tableStore{t: st.t, clock: clock, release: release}, nil
}
