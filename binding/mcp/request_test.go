package mcp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
)

// identKinds are the request kinds whose member carries an ident and a
// contentLength; the list kinds carry neither.
var identKinds = map[uint8]bool{
	mcp.McpBeginExKindToolsCall:            true,
	mcp.McpBeginExKindPromptsGet:           true,
	mcp.McpBeginExKindResourcesRead:        true,
	mcp.McpBeginExKindResourcesSubscribe:   true,
	mcp.McpBeginExKindResourcesUnsubscribe: true,
	mcp.McpBeginExKindRequest:              true,
}

func buildRequest(t *testing.T, kind uint8, r mcp.RequestBegin) *mcp.McpBeginEx {
	t.Helper()
	var b mcp.McpBeginExBuilder
	buf := make([]byte, 256)
	eb := b.Wrap(buf, 0, len(buf)).TypeID(7)
	require.True(t, r.Build(eb, kind))
	n, err := eb.BuildLimit()
	require.NoError(t, err)
	var ex mcp.McpBeginEx
	require.NoError(t, ex.Wrap(buf, 0, n))
	return &ex
}

func TestRequestBeginRoundTrip(t *testing.T) {
	for kind := mcp.McpBeginExKindToolsList; kind <= mcp.McpBeginExKindRequest; kind++ {
		in := mcp.RequestBegin{SessionID: []byte("s1"), Ident: []byte("x/y"), ContentLength: 42, Timeout: 900}
		ex := buildRequest(t, kind, in)
		require.Equal(t, kind, ex.Kind())
		var out mcp.RequestBegin
		require.True(t, out.Read(ex), "kind %d", kind)
		assert.Equal(t, "s1", string(out.SessionID), "kind %d", kind)
		assert.False(t, out.SessionIDNull, "kind %d", kind)
		assert.Equal(t, int64(900), out.Timeout, "kind %d", kind)
		if identKinds[kind] {
			assert.Equal(t, "x/y", string(out.Ident), "kind %d", kind)
			assert.False(t, out.IdentNull, "kind %d", kind)
			assert.Equal(t, int32(42), out.ContentLength, "kind %d", kind)
		} else {
			assert.Nil(t, out.Ident, "kind %d", kind)
			assert.True(t, out.IdentNull, "kind %d", kind)
			assert.Equal(t, int32(-1), out.ContentLength, "kind %d", kind)
		}
	}
}

func TestRequestBeginNulls(t *testing.T) {
	ex := buildRequest(t, mcp.McpBeginExKindResourcesRead, mcp.RequestBegin{SessionIDNull: true, IdentNull: true, ContentLength: -1})
	var out mcp.RequestBegin
	require.True(t, out.Read(ex))
	assert.True(t, out.SessionIDNull)
	assert.True(t, out.IdentNull)
	assert.Equal(t, int32(-1), out.ContentLength)
}

func TestRequestBeginNotARequest(t *testing.T) {
	var r mcp.RequestBegin
	var b mcp.McpBeginExBuilder
	buf := make([]byte, 64)
	assert.False(t, r.Build(b.Wrap(buf, 0, len(buf)).TypeID(7), mcp.McpBeginExKindLifecycle))

	eb := b.Wrap(buf, 0, len(buf)).TypeID(7)
	eb.Lifecycle().SessionID("s1")
	n, err := eb.BuildLimit()
	require.NoError(t, err)
	var ex mcp.McpBeginEx
	require.NoError(t, ex.Wrap(buf, 0, n))
	assert.False(t, r.Read(&ex))
}

func TestBuildReply(t *testing.T) {
	req := buildRequest(t, mcp.McpBeginExKindToolsCall, mcp.RequestBegin{SessionID: []byte("s1"), Ident: []byte("echo"), ContentLength: 12, Timeout: 5})
	var b mcp.McpBeginExBuilder
	buf := make([]byte, 256)
	eb := b.Wrap(buf, 0, len(buf)).TypeID(7)
	require.True(t, mcp.BuildReply(eb, req, 0))
	n, err := eb.BuildLimit()
	require.NoError(t, err)
	var reply mcp.McpBeginEx
	require.NoError(t, reply.Wrap(buf, 0, n))
	v := reply.ToolsCall()
	assert.Equal(t, "s1", v.SessionIDString())
	assert.Equal(t, "echo", v.NameString())
	assert.Equal(t, int32(-1), v.ContentLength(), "a reply's length is not known")
	assert.Equal(t, int64(0), v.Timeout())

	lb := b.Wrap(buf, 0, len(buf)).TypeID(7)
	lb.Lifecycle().SessionID("s2")
	n, err = lb.BuildLimit()
	require.NoError(t, err)
	var life mcp.McpBeginEx
	require.NoError(t, life.Wrap(buf, 0, n))
	out := make([]byte, 256)
	eb = b.Wrap(out, 0, len(out)).TypeID(7)
	require.True(t, mcp.BuildReply(eb, &life, uint16(mcp.McpCapabilitiesServerTools)))
	n, err = eb.BuildLimit()
	require.NoError(t, err)
	require.NoError(t, reply.Wrap(out, 0, n))
	lv := reply.Lifecycle()
	assert.Equal(t, "s2", lv.SessionIDString())
	assert.Equal(t, uint16(mcp.McpCapabilitiesServerTools), lv.Capabilities())
}

func TestRequestBeginEmptyIsNotNull(t *testing.T) {
	ex := buildRequest(t, mcp.McpBeginExKindPromptsGet, mcp.RequestBegin{SessionID: []byte{}, Ident: []byte{}, ContentLength: 3})
	var out mcp.RequestBegin
	require.True(t, out.Read(ex))
	assert.False(t, out.SessionIDNull, "an empty session id is not null")
	assert.False(t, out.IdentNull, "an empty name is not null")
	assert.Empty(t, out.SessionID)
	assert.Equal(t, int32(3), out.ContentLength)
}

func TestRequestBeginClientResponseIsNotARequest(t *testing.T) {
	var r mcp.RequestBegin
	var b mcp.McpBeginExBuilder
	buf := make([]byte, 64)
	eb := b.Wrap(buf, 0, len(buf)).TypeID(7)
	assert.False(t, r.Build(eb, mcp.McpBeginExKindClientResponse))
	assert.Equal(t, 12, eb.Limit(), "a refused kind writes nothing")

	eb = b.Wrap(buf, 0, len(buf)).TypeID(7)
	eb.ClientResponse().SessionID("s1").ID("7")
	n, err := eb.BuildLimit()
	require.NoError(t, err)
	var ex mcp.McpBeginEx
	require.NoError(t, ex.Wrap(buf, 0, n))
	assert.False(t, r.Read(&ex))
	assert.False(t, mcp.BuildReply(b.Wrap(buf, 0, len(buf)).TypeID(7), &ex, 0))
}

func BenchmarkRequestBeginRead(b *testing.B) {
	var eb mcp.McpBeginExBuilder
	buf := make([]byte, 256)
	w := eb.Wrap(buf, 0, len(buf)).TypeID(7)
	w.ToolsCall().SessionID("s1").Name("echo").ContentLength(12).Timeout(5)
	n, err := w.BuildLimit()
	require.NoError(b, err)
	var ex mcp.McpBeginEx
	require.NoError(b, ex.Wrap(buf, 0, n))
	var r mcp.RequestBegin
	b.ReportAllocs()
	for b.Loop() {
		if !r.Read(&ex) {
			b.Fatal("not a request")
		}
	}
}

func TestRequestBeginBuildAllocs(t *testing.T) {
	var b mcp.McpBeginExBuilder
	buf := make([]byte, 256)
	r := mcp.RequestBegin{SessionID: []byte("s1"), Ident: []byte("x/y"), ContentLength: 4, Timeout: 9}
	for _, kind := range []uint8{mcp.McpBeginExKindToolsCall, mcp.McpBeginExKindResourcesRead, mcp.McpBeginExKindRequest, mcp.McpBeginExKindToolsList} {
		allocs := testing.AllocsPerRun(100, func() {
			eb := b.Wrap(buf, 0, len(buf)).TypeID(7)
			if !r.Build(eb, kind) {
				t.Fatal("not built")
			}
			if _, err := eb.BuildLimit(); err != nil {
				t.Fatal(err)
			}
		})
		assert.Zero(t, allocs, "kind %d", kind)
	}
}
