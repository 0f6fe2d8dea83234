package engine

import "sync"

// Labels maps names (namespaces, bindings, binding types) to int32 label ids
// shared by every worker of a process. Ids count from 1; 0 means none.
// Lookups happen when bindings attach, never per frame.
type Labels struct {
	mu    sync.RWMutex
	ids   map[string]int32
	names []string
}

// NewLabels returns an empty table.
func NewLabels() *Labels {
	return &Labels{ids: map[string]int32{}, names: []string{""}}
}

// Supply returns the id of name, assigning the next one on first use.
func (l *Labels) Supply(name string) int32 {
	l.mu.RLock()
	id, ok := l.ids[name]
	l.mu.RUnlock()
	if ok {
		return id
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if id, ok := l.ids[name]; ok {
		return id
	}
	id = int32(len(l.names))
	l.ids[name] = id
	l.names = append(l.names, name)
	return id
}

// Lookup returns the id of name, if it was supplied.
func (l *Labels) Lookup(name string) (int32, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	id, ok := l.ids[name]
	return id, ok
}

// Name returns the name of id, or "" when id is unknown.
func (l *Labels) Name(id int32) string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if id <= 0 || int(id) >= len(l.names) {
		return ""
	}
	return l.names[id]
}
