//go:build unix

package ring

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// fileMode keeps ring files private to their owner: frames carry
// authorization ids and payloads such as HTTP headers with credentials.
const fileMode = 0o600

// Map creates (or truncates) the file at path, sizes it to capacity data
// bytes plus [TrailerLength], and maps it shared, so that other processes
// (a future `sluice dump`) see the records through [Open]. Missing parent
// directories are created. Capacity must be a power of two in
// [MinCapacity, MaxCapacity]. Call [Ring.Close] to unmap.
//
// The engine names the file <engine-dir>/data<N> for worker N
// (ARCHITECTURE.md §4).
func Map(path string, capacity int) (*Ring, error) {
	if !checkCapacity(capacity) {
		return nil, fmt.Errorf("ring: map %s: capacity %d: %w", path, capacity, ErrCapacity)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("ring: map: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, fileMode)
	if err != nil {
		return nil, fmt.Errorf("ring: map: %w", err)
	}
	defer f.Close()
	size := capacity + TrailerLength
	// Truncating an empty file extends it with zeros, which is an empty
	// ring: head, tail and every record header are 0.
	if err := f.Truncate(int64(size)); err != nil {
		return nil, fmt.Errorf("ring: map: %w", err)
	}
	return mapFile(f, path, size, capacity)
}

// Open maps an existing ring file, read/write and shared, as written by
// [Map]: for example to read a worker's records from outside. The file size
// must be a valid capacity plus [TrailerLength], and the trailer's head and
// tail must be consistent ([ErrCorrupt]). The ring is live: Read on it
// consumes records, and producers on either side see each other. There must
// still be only one consumer across all processes, so Read through Open only
// while the owner does not (for example on a stopped engine's file).
func Open(path string) (*Ring, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("ring: open: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ring: open: %w", err)
	}
	size := fi.Size()
	capacity := size - TrailerLength
	if capacity > MaxCapacity || !checkCapacity(int(capacity)) {
		return nil, fmt.Errorf("ring: open %s: file size %d is not a capacity plus the %d-byte trailer: %w",
			path, size, TrailerLength, ErrCapacity)
	}
	r, err := mapFile(f, path, int(size), int(capacity))
	if err != nil {
		return nil, err
	}
	head, tail := r.head.Load(), r.tail.Load()
	if head < 0 || head%Alignment != 0 || tail%Alignment != 0 || tail < head || tail-head > capacity {
		_ = r.Close()
		return nil, fmt.Errorf("ring: open %s: head %d, tail %d: %w", path, head, tail, ErrCorrupt)
	}
	return r, nil
}

func mapFile(f *os.File, path string, size, capacity int) (*Ring, error) {
	buf, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("ring: mmap %s: %w", path, err)
	}
	r := newRing(buf, capacity)
	r.unmap = unix.Munmap
	return r, nil
}
