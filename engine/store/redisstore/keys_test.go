package redisstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestKeyspace(t *testing.T) {
	k := keyspace{prefix: "sluice:a*b[1]:", db: 2}
	assert.Equal(t, `sluice:a\*b\[1\]:c:*`, k.changes(), "glob characters of the prefix are escaped")
	assert.Equal(t, "__keyevent@2__:expired", k.expired())

	key, ok := k.keyOfChannel(k.channel("tools"))
	assert.True(t, ok)
	assert.Equal(t, "tools", key)
	_, ok = k.keyOfChannel("sluice:other:c:tools")
	assert.False(t, ok, "another store's channel")

	key, ok = k.keyOfValue(k.value("tools"))
	assert.True(t, ok)
	assert.Equal(t, "tools", key)
	_, ok = k.keyOfValue(k.lock("tools"))
	assert.False(t, ok, "a lock's expiry is no value's")

	v, present, valid := decodeChange("1abc")
	assert.Equal(t, []byte("abc"), v)
	assert.True(t, present)
	assert.True(t, valid)
	v, present, valid = decodeChange("1")
	assert.Equal(t, []byte{}, v, "an empty value is present")
	assert.True(t, present && valid)
	_, present, valid = decodeChange("0")
	assert.False(t, present)
	assert.True(t, valid)
	for _, bad := range []string{"", "0x", "2abc", "\x00"} {
		_, _, valid = decodeChange(bad)
		assert.False(t, valid, "%q", bad)
	}
}

// FuzzDecode feeds the decoders of what arrives from Redis (channel names,
// expired key names, change payloads) arbitrary bytes: they never panic,
// and what the store itself encodes decodes back to the same key and
// value.
func FuzzDecode(f *testing.F) {
	f.Add("sluice:cache0:", "tools", "sluice:cache0:c:tools", "1value")
	f.Add("p:", "", "p:c:", "0")
	f.Add("", "k", "c:k", "")
	f.Add("a*b?", "x\x00y", "__keyevent@0__:expired", "\xff")
	f.Fuzz(func(t *testing.T, prefix, key, channel, payload string) {
		k := keyspace{prefix: prefix}
		_, _ = k.keyOfChannel(channel)
		_, _ = k.keyOfValue(channel)
		value, present, valid := decodeChange(payload)
		if valid && present && string(value) != payload[1:] {
			t.Fatalf("decodeChange(%q) = %q", payload, value)
		}
		if got, ok := k.keyOfChannel(k.channel(key)); !ok || got != key {
			t.Fatalf("channel of %q decodes to %q, %v", key, got, ok)
		}
		if got, ok := k.keyOfValue(k.value(key)); !ok || got != key {
			t.Fatalf("value key of %q decodes to %q, %v", key, got, ok)
		}
		if _, ok := k.keyOfValue(k.lock(key)); ok {
			t.Fatalf("lock key of %q decodes as a value key", key)
		}
		v, ok, valid := decodeChange(string(changePut) + payload)
		if !valid || !ok || string(v) != payload {
			t.Fatalf("put payload %q does not round-trip", payload)
		}
	})
}
