//go:build !unix

package ring

import (
	"errors"
	"fmt"
)

// Map is not supported on this platform: rings are mapped with mmap(2).
func Map(path string, capacity int) (*Ring, error) {
	return nil, fmt.Errorf("ring: map %s: %w", path, errors.ErrUnsupported)
}

// Open is not supported on this platform: rings are mapped with mmap(2).
func Open(path string) (*Ring, error) {
	return nil, fmt.Errorf("ring: open %s: %w", path, errors.ErrUnsupported)
}
