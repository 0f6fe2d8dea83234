package spec

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An expected extension given as built bytes is decoded by the builder's
// IDL type when it differs, and the failure names the first field that
// differs, with both values decoded.
func TestBuiltExtensionDiff(t *testing.T) {
	err := playSrc(t, newMemNetwork(), 2*time.Second, `connect "zilla://streams/app0"
write zilla:begin.ext ${http:beginEx()
                          .typeId(zilla:id("http"))
                          .header(":scheme", "http")
                          .header(":method", "GET")
                          .header(":authority", "localhost:8080")
                          .build()}
connected
`, `accept "zilla://streams/app0"
accepted
read zilla:begin.ext ${http:beginEx()
                         .typeId(zilla:id("http"))
                         .header(":scheme", "http")
                         .header(":method", "GET")
                         .header(":path", "/")
                         .build()}
connected
`)
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, `server.rpt:3: expected BEGIN with extension HttpBeginEx{compositeId: 0, typeId: 1, headers: [{name: ":scheme", value: "http"}, {name: ":method", value: "GET"}, {name: ":path", value: "/"}]}`)
	assert.Contains(t, msg, `(HttpBeginEx.headers[2].name: expected ":path", observed ":authority")`)
	assert.Contains(t, msg, `observed BEGIN ext HttpBeginEx{compositeId: 0, typeId: 1, headers: [{name: ":scheme", value: "http"}, {name: ":method", value: "GET"}, {name: ":authority", value: "localhost:8080"}]}`)
}

// Bytes that no builder made still compare, and print, as bytes.
func TestRawExtensionDiff(t *testing.T) {
	err := playSrc(t, newMemNetwork(), 2*time.Second, `connect "zilla://streams/app0"
write zilla:begin.ext [0x01 0x02]
connected
`, `accept "zilla://streams/app0"
accepted
read zilla:begin.ext [0x01 0x03]
connected
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `(bytes differ), observed BEGIN ext [0x01 0x02]`)
}
