package redisstore

import (
	"strconv"
	"strings"
)

// keyspace names everything the store keeps in Redis under its prefix:
// values under prefix+"v:"+key, locks under prefix+"l:"+key, and change
// notifications on the channel prefix+"c:"+key. Values and locks live in
// separate namespaces, as the SPI requires, and two stores with different
// prefixes never see each other's keys or notifications.
type keyspace struct {
	prefix string
	db     int
}

const (
	valueTag   = "v:"
	lockTag    = "l:"
	channelTag = "c:"
)

func (k keyspace) value(key string) string   { return k.prefix + valueTag + key }
func (k keyspace) lock(key string) string    { return k.prefix + lockTag + key }
func (k keyspace) channel(key string) string { return k.prefix + channelTag + key }

// changes is the pattern that matches every change channel of the store.
// The prefix is escaped, since a store name may hold glob characters.
func (k keyspace) changes() string { return globEscape(k.prefix+channelTag) + "*" }

// expired is the channel on which Redis announces expired keys of the
// store's database, when keyevent notifications are enabled.
func (k keyspace) expired() string { return "__keyevent@" + strconv.Itoa(k.db) + "__:expired" }

// keyOfChannel returns the store key a change channel is about, or false
// for a channel outside the store's namespace.
func (k keyspace) keyOfChannel(channel string) (string, bool) {
	return cutPrefix(channel, k.prefix, channelTag)
}

// keyOfValue returns the store key a Redis value key holds, or false for
// a key outside the store's value namespace (a lock, or another store's).
func (k keyspace) keyOfValue(rkey string) (string, bool) {
	return cutPrefix(rkey, k.prefix, valueTag)
}

func cutPrefix(s, prefix, tag string) (string, bool) {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return "", false
	}
	return strings.CutPrefix(rest, tag)
}

// globEscape escapes the characters Redis glob patterns treat specially.
func globEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// A change notification's payload is one tag byte, then for a put the
// value: "1"+value after a put, "0" after a delete.
const (
	changePut    = '1'
	changeDelete = '0'
)

// decodeChange reads a change payload. valid is false for a payload no
// store of this type publishes; such a message is ignored.
func decodeChange(payload string) (value []byte, ok, valid bool) {
	if payload == "" {
		return nil, false, false
	}
	switch payload[0] {
	case changePut:
		return []byte(payload[1:]), true, true
	case changeDelete:
		return nil, false, len(payload) == 1
	default:
		return nil, false, false
	}
}
