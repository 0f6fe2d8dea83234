//go:build !amd64 || race || sluice_portable

package atomicx_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicehq/sluice/internal/atomicx"
)

// TestPortable: under the race detector, off amd64 and with the
// sluice_portable tag, the stores are sync/atomic's, which the race
// detector understands.
func TestPortable(t *testing.T) { assert.True(t, atomicx.Portable) }
