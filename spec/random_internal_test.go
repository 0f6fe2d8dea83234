package spec

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The first ints of java.util.Random for two seeds, as Java gives them
// (new Random(42).nextInt() and new Random(0).nextInt()).
func TestJavaRandom(t *testing.T) {
	assert.Equal(t, int32(-1170105035), newJavaRandom(42).next(32))
	assert.Equal(t, int32(-1155484576), newJavaRandom(0).next(32))
	r := newJavaRandom(42)
	first := r.next(32)
	b := make([]byte, 6)
	newJavaRandom(42).nextBytes(b)
	assert.Equal(t, []byte{byte(first), byte(first >> 8), byte(first >> 16), byte(first >> 24)}, b[:4], "low byte first")
	second := r.next(32)
	assert.Equal(t, []byte{byte(second), byte(second >> 8)}, b[4:], "a partial int gives its low bytes")
}
