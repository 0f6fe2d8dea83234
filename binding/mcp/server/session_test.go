package server

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSessionStateHasNoLock pins the design of session.go: a session and
// its table belong to their owner worker alone, so nothing in them is a
// mutex or an atomic that another worker could be meant to share.
func TestSessionStateHasNoLock(t *testing.T) {
	for _, v := range []any{sessionTable{}, session{}, postRef{}, getRef{}, inflight{}, replayRing{}} {
		typ := reflect.TypeOf(v)
		for f := range typ.Fields() {
			pkg := f.Type.PkgPath()
			if f.Type.Kind() == reflect.Pointer {
				pkg = f.Type.Elem().PkgPath()
			}
			assert.False(t, pkg == "sync" || pkg == "sync/atomic", "%s.%s is a %s", typ.Name(), f.Name, f.Type)
		}
	}
}

// TestSessionIDsNameTheirOwner checks that each kind of id names the
// worker that handed it out, and that other ids name none.
func TestSessionIDsNameTheirOwner(t *testing.T) {
	seq := new(sequentialIDs)
	for _, tt := range []struct {
		name   string
		table  *sessionTable
		worker int
	}{
		{"random on worker 0", newSessionTable(0, nil), 0},
		{"random on worker 5", newSessionTable(5, nil), 5},
		{"random on worker 127", newSessionTable(127, nil), 127},
		{"sequential on worker 0", newSessionTable(0, seq), 0},
		{"sequential on worker 3", newSessionTable(3, seq), 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := tt.table.newID()
			if tt.table.ids == nil {
				require.Len(t, id, 32)
				assert.Equal(t, strings.ToLower(id), id)
			} else {
				assert.True(t, strings.HasPrefix(id, "session-"), id)
			}
			assert.Equal(t, tt.worker, tt.table.ownerOf([]byte(id)))
		})
	}
	assert.Equal(t, "session-3", newSessionTable(1, seq).newID(), "sequential ids count across workers")

	fixed := newFixedIDs([]string{"5ca1ab1e-feed", "5ca1ab1e-b007"})
	first, second := newSessionTable(1, fixed), newSessionTable(0, fixed)
	assert.Equal(t, -1, first.ownerOf([]byte("5ca1ab1e-feed")), "not handed out yet")
	assert.Equal(t, "5ca1ab1e-feed", first.newID())
	assert.Equal(t, "5ca1ab1e-b007", second.newID())
	assert.Equal(t, 1, second.ownerOf([]byte("5ca1ab1e-feed")), "a fixed id names the worker that minted it")
	assert.Equal(t, 0, first.ownerOf([]byte("5ca1ab1e-b007")))
	assert.Equal(t, "5ca1ab1e-feed", second.newID(), "fixed ids start again from the first")
	assert.Equal(t, 0, first.ownerOf([]byte("5ca1ab1e-feed")), "the last minter owns a reused id")
	assert.Equal(t, -1, first.ownerOf([]byte("5ca1ab1e-0000")))

	random, sequential := newSessionTable(0, nil), newSessionTable(0, seq)
	for _, tt := range []struct {
		name  string
		table *sessionTable
		id    string
		want  int
	}{
		{"uppercase hex", random, strings.Repeat("AB", 16), 0xab},
		{"short hex", random, strings.Repeat("ab", 15), -1},
		{"sequential id, random table", random, "session-1", -1},
		{"not handed out yet", sequential, "session-99", -1},
		{"past the owners", sequential, "session-5000.2", 2},
		{"past the owners, no worker", sequential, "session-5000", -1},
		{"bad worker", sequential, "session-5000.x", -1},
		{"bad number", sequential, "session-x", -1},
		{"other", sequential, "sess-1", -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.table.ownerOf([]byte(tt.id)))
		})
	}
}

// TestKeepWaiting: the list of requests waiting for discovery keeps, in
// order, only the references that still name a POST waiting for it: not
// one recycled since (its generation moved on), nor one whose client left.
func TestKeepWaiting(t *testing.T) {
	waiting, left, recycled := &post{wait: waitDiscover}, &post{wait: waitDiscover}, &post{wait: waitDiscover}
	other := &post{wait: waitDiscover}
	refs := []postRef{waiting.ref(), left.ref(), recycled.ref(), other.ref()}
	left.wait = waitNone
	recycled.gen++
	kept := keepWaiting(refs, waitDiscover)
	assert.Equal(t, []postRef{waiting.ref(), other.ref()}, kept)
	assert.Equal(t, postRef{}, refs[2], "the dropped tail is cleared")
	assert.Equal(t, postRef{}, refs[3])
}
