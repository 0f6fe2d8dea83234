package client

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLookupKey: an answer in inputResponses is found by its key as the
// key decodes, and one whose key is named twice is not read at all.
func TestLookupKey(t *testing.T) {
	obj := []byte(`{"a":{"action":"accept"},"\u0062":{"action":"decline"},"c":{"x":1},"c":{"x":2}}`)
	assert.Equal(t, `{"action":"accept"}`, string(lookupKey(obj, "a")))
	assert.Equal(t, `{"action":"decline"}`, string(lookupKey(obj, "b")), "keys compared as they decode")
	assert.Nil(t, lookupKey(obj, "c"), "a key named twice has no one reading")
	assert.Nil(t, lookupKey(obj, "d"))
}

// TestInputKeys: a request's inputRequests key is its id (a string
// decoded, a number's text), made unique in its entry; a second request
// with the id of one still waiting has none.
func TestInputKeys(t *testing.T) {
	for id, want := range map[string]string{`7`: "7", `"7"`: "7", `"\u0037x"`: "7x", `-1.5e3`: "-1.5e3"} {
		k, ok := inputKey([]byte(id))
		assert.True(t, ok, id)
		assert.Equal(t, want, k, id)
	}
	for _, id := range []string{`true`, `null`, `{}`, `"\x"`, ``} {
		_, ok := inputKey([]byte(id))
		assert.False(t, ok, id)
	}

	p := &pending{asked: []asked{{id: []byte(`7`), key: "7"}, {id: []byte(`"7#2"`), key: "7#2"}}}
	k, ok := p.uniqueKey("7", []byte(`"7"`))
	assert.True(t, ok)
	assert.Equal(t, "7#3", k, "7 and 7#2 are taken")
	_, ok = p.uniqueKey("7", []byte(`7`))
	assert.False(t, ok, "the id of a request still waiting")
	_, ok = p.uniqueKey("7#2", []byte(`"7#\u0032"`))
	assert.False(t, ok, "string ids compared as they decode")
	k, ok = p.uniqueKey("8", []byte(`8`))
	assert.True(t, ok)
	assert.Equal(t, "8", k)
}
