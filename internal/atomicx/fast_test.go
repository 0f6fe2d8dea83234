//go:build amd64 && !race && !sluice_portable

package atomicx_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicehq/sluice/internal/atomicx"
)

// TestPortable: on amd64, without the race detector or the sluice_portable
// tag, the stores are the plain ones.
func TestPortable(t *testing.T) { assert.False(t, atomicx.Portable) }
