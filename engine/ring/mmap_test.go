//go:build unix

package ring_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine/ring"
)

// TestMapOpen writes through one mapping and reads through another made by
// Open from the file alone: the file describes itself.
func TestMapOpen(t *testing.T) {
	const capacity = 4096
	path := filepath.Join(t.TempDir(), "engine", "data0")
	w, err := ring.Map(path, capacity)
	require.NoError(t, err)

	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, int64(capacity+ring.TrailerLength), fi.Size())
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	// Write through w, reading some back through w, until the ring has
	// wrapped and is full: the reader then meets padding too.
	var (
		seq  uint64
		read int
	)
	for w.ProducerPosition() < capacity || w.Size() == 0 {
		if err := w.Write(int32(seq%5+1), pattern(sizeOf(seq, w.MaxMessage()), seq)); err != nil {
			require.ErrorIs(t, err, ring.ErrFull)
			read += len(drain(t, w))
			continue
		}
		seq++
	}
	for w.Write(int32(seq%5+1), pattern(sizeOf(seq, w.MaxMessage()), seq)) == nil {
		seq++
	}
	require.Greater(t, read, 0)

	r, err := ring.Open(path)
	require.NoError(t, err)
	assert.Equal(t, capacity, r.Capacity())
	assert.Equal(t, w.ProducerPosition(), r.ProducerPosition())
	assert.Equal(t, w.ConsumerPosition(), r.ConsumerPosition())
	got := drain(t, r)
	require.Len(t, got, int(seq)-read)
	for k, rec := range got {
		i := uint64(read + k)
		assert.Equal(t, int32(i%5+1), rec.msgType)
		assert.Equal(t, pattern(sizeOf(i, w.MaxMessage()), i), rec.payload)
	}

	// The two mappings share the memory: the writer sees the reader's head
	// and can write into the space it freed.
	assert.Zero(t, w.Size())
	require.NoError(t, w.Write(42, []byte("shared")))
	assert.Equal(t, []record{{42, []byte("shared")}}, drain(t, r))

	require.NoError(t, r.Close())
	require.NoError(t, w.Close())
	require.NoError(t, w.Close(), "closing twice is a no-op")
	assert.NotContains(t, mappings(t), path, "Close unmaps")

	// The file outlives the mappings, and Map starts it afresh.
	w, err = ring.Map(path, capacity)
	require.NoError(t, err)
	defer w.Close()
	assert.Zero(t, w.ProducerPosition())
	assert.Empty(t, drain(t, w))
}

// mappings returns /proc/self/maps, or skips where there is none.
func mappings(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip("no /proc/self/maps:", err)
	}
	return string(b)
}

func TestMapMapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data1")
	r, err := ring.Map(path, 1024)
	require.NoError(t, err)
	assert.Contains(t, mappings(t), path)
	require.NoError(t, r.Close())
	assert.NotContains(t, mappings(t), path)
}

func TestMapErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := ring.Map(filepath.Join(dir, "data0"), 1000)
	require.ErrorIs(t, err, ring.ErrCapacity)

	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = ring.Map(filepath.Join(file, "data0"), 1024)
	require.Error(t, err, "parent is a file")
	assert.True(t, strings.HasPrefix(err.Error(), "ring: map"), err.Error())
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, size int, edit func([]byte)) string {
		b := make([]byte, size)
		if edit != nil {
			edit(b)
		}
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o600))
		return p
	}
	le := func(b []byte, off int, v uint64) {
		for i := range 8 {
			b[off+i] = byte(v >> (8 * i))
		}
	}
	const capacity = 1024
	tests := []struct {
		name string
		path string
		want error
	}{
		{"missing", filepath.Join(dir, "missing"), fs.ErrNotExist},
		{"empty", write("empty", 0, nil), ring.ErrCapacity},
		{"trailer only", write("trailer", ring.TrailerLength, nil), ring.ErrCapacity},
		{"no trailer", write("notrailer", 4*capacity, nil), ring.ErrCapacity},
		{"not a power of two", write("odd", 1000+ring.TrailerLength, nil), ring.ErrCapacity},
		{"tail behind head", write("behind", capacity+ring.TrailerLength, func(b []byte) {
			le(b, capacity+ring.HeadOffset, 64)
			le(b, capacity+ring.TailOffset, 32)
		}), ring.ErrCorrupt},
		{"more than capacity in use", write("over", capacity+ring.TrailerLength, func(b []byte) {
			le(b, capacity+ring.TailOffset, capacity+8)
		}), ring.ErrCorrupt},
		{"misaligned tail", write("misaligned", capacity+ring.TrailerLength, func(b []byte) {
			le(b, capacity+ring.TailOffset, 12)
		}), ring.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ring.Open(tt.path)
			require.ErrorIs(t, err, tt.want)
			assert.Nil(t, r)
			assert.True(t, strings.HasPrefix(err.Error(), "ring: open"), err.Error())
		})
	}
	assert.NotContains(t, mappings(t), dir, "a rejected file is unmapped")

	r, err := ring.Open(write("good", capacity+ring.TrailerLength, nil))
	require.NoError(t, err)
	assert.Equal(t, capacity, r.Capacity())
	require.NoError(t, r.Close())
}
