package client

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLookupKey: an answer in inputResponses is found by its key as the
// key decodes, and one whose key is named twice is not read at all.
func TestLookupKey(t *testing.T) {
	obj := []byte(`{"a":{"action":"accept"},"\u0062":{"action":"decline"},"c":{"x":1},"c":{"x":2}}`)
	assert.Equal(t, `{"action":"accept"}`, string(lookupKey(obj, []byte(`"a"`))))
	assert.Equal(t, `{"action":"decline"}`, string(lookupKey(obj, []byte(`"b"`))), "keys compared as they decode")
	assert.Nil(t, lookupKey(obj, []byte(`"c"`)), "a key named twice has no one reading")
	assert.Nil(t, lookupKey(obj, []byte(`"d"`)))
}
