package proxy_test

// Black-box tests of the flyweights generated from idl/proxy.idl, through
// the exported API only: pinned encodings, a round trip of every address
// kind and info case, and truncated input, which must fail to wrap and
// never panic.

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/frame/proxy"
	"github.com/sluicehq/sluice/idl/flyweight"
	"github.com/sluicehq/sluice/internal/flyweighttest"
)

const (
	cid int64 = 0x0102030405060708
	tid int32 = 0x0a0b0c0d
)

type enc = flyweighttest.Enc

func build(t *testing.T, fill func(b *proxy.ProxyBeginExBuilder)) []byte {
	t.Helper()
	buf := make([]byte, 1024)
	var b proxy.ProxyBeginExBuilder
	fill(b.Wrap(buf, 0, len(buf)).CompositeID(cid).TypeID(tid))
	n, err := b.BuildLimit()
	require.NoError(t, err)
	return buf[:n]
}

func TestPinnedEncodings(t *testing.T) {
	src4 := []byte{192, 0, 2, 7}
	dst4 := []byte{192, 0, 2, 1}
	src6 := make([]byte, 16)
	dst6 := make([]byte, 16)
	src6[15], dst6[15] = 7, 1
	tests := []struct {
		name string
		fill func(b *proxy.ProxyBeginExBuilder)
		want enc
	}{
		{
			name: "inet",
			fill: func(b *proxy.ProxyBeginExBuilder) {
				b.Address().Inet().Protocol(proxy.ProxyAddressProtocolStream).
					Source("10.0.0.7").Destination("example.com").SourcePort(49152).DestinationPort(443)
			},
			want: enc{}.Ext(cid, tid).U8(0).U8(0).Str16("10.0.0.7").Str16("example.com").U16(49152).U16(443).Array(),
		},
		{
			name: "inet4",
			fill: func(b *proxy.ProxyBeginExBuilder) {
				b.Address().Inet4().Protocol(proxy.ProxyAddressProtocolDatagram).
					Source(src4).Destination(dst4).SourcePort(53).DestinationPort(5353)
			},
			want: enc{}.Ext(cid, tid).U8(1).U8(1).Add(src4...).Add(dst4...).U16(53).U16(5353).Array(),
		},
		{
			name: "inet6",
			fill: func(b *proxy.ProxyBeginExBuilder) {
				b.Address().Inet6().Protocol(proxy.ProxyAddressProtocolStream).
					Source(src6).Destination(dst6).SourcePort(1).DestinationPort(2)
			},
			want: enc{}.Ext(cid, tid).U8(2).U8(0).Add(src6...).Add(dst6...).U16(1).U16(2).Array(),
		},
		{
			name: "none with infos",
			fill: func(b *proxy.ProxyBeginExBuilder) {
				b.Address().None()
				infos := b.Infos()
				infos.Item().Alpn("h2")
				infos.Item().Authority("example.com")
			},
			want: enc{}.Ext(cid, tid).U8(4).Array(
				enc{}.U8(0x01).Add(2).Add([]byte("h2")...),
				enc{}.U8(0x02).Str16("example.com"),
			),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := build(t, tt.fill)
			assert.Equal(t, []byte(tt.want), got)
		})
	}
}

func TestRoundTrip(t *testing.T) {
	unixSrc := make([]byte, 108)
	copy(unixSrc, "/run/app.sock")
	ext := build(t, func(b *proxy.ProxyBeginExBuilder) {
		b.Address().Unix().Protocol(proxy.ProxyAddressProtocolStream).Source(unixSrc).Destination(make([]byte, 108))
		infos := b.Infos()
		infos.Item().Secure().Version("TLSv1.3")
		infos.Item().Identity().Value([]byte("client-cn"))
		infos.Item().Namespace("tenant-a")
	})
	var ex proxy.ProxyBeginEx
	require.NoError(t, ex.Wrap(ext, 0, len(ext)))
	assert.Equal(t, cid, ex.CompositeID())
	assert.Equal(t, tid, ex.TypeID())
	a := ex.Address()
	require.Equal(t, proxy.ProxyAddressKindUnix, a.Kind())
	u := a.Unix()
	assert.Equal(t, unixSrc, u.Source())
	infos := ex.Infos()
	require.Equal(t, 3, infos.Len())
	var kinds []proxy.ProxyInfoType
	for _, info := range infos.All() {
		kinds = append(kinds, info.Kind())
		switch info.Kind() {
		case proxy.ProxyInfoTypeSecure:
			s := info.Secure()
			assert.Equal(t, proxy.ProxySecureInfoTypeVersion, s.Kind())
			assert.Equal(t, "TLSv1.3", s.VersionString())
		case proxy.ProxyInfoTypeIdentity:
			id := info.Identity()
			assert.Equal(t, "client-cn", string(id.Value()))
		case proxy.ProxyInfoTypeNamespace:
			assert.Equal(t, "tenant-a", info.NamespaceString())
		}
	}
	assert.Equal(t, []proxy.ProxyInfoType{proxy.ProxyInfoTypeSecure, proxy.ProxyInfoTypeIdentity, proxy.ProxyInfoTypeNamespace}, kinds)
}

// TestTruncated wraps every prefix of an encoding: each one is refused,
// none panics.
func TestTruncated(t *testing.T) {
	ext := build(t, func(b *proxy.ProxyBeginExBuilder) {
		b.Address().Inet().Protocol(proxy.ProxyAddressProtocolStream).
			Source("127.0.0.1").Destination("127.0.0.1").SourcePort(1).DestinationPort(2)
		b.Infos().Item().Authority("localhost")
	})
	var ex proxy.ProxyBeginEx
	require.True(t, ex.TryWrap(ext, 0, len(ext)))
	for n := range len(ext) {
		assert.False(t, ex.TryWrap(ext[:n], 0, n), "a prefix of %d bytes", n)
	}
	bad := append([]byte(nil), ext...)
	bad[12] = 9 // no such address family
	assert.False(t, ex.TryWrap(bad, 0, len(bad)))
}

// TestWrapSlot writes a ProxyBeginEx in a BEGIN's extension slot through
// ExtensionBuffer and WrapSlot, and checks that a BEGIN that failed before
// its extension keeps its own error while the extension's setters do nothing.
func TestWrapSlot(t *testing.T) {
	buf := make([]byte, 512)
	var b frame.BeginBuilder
	var ex proxy.ProxyBeginExBuilder
	header := func() *frame.BeginBuilder {
		return b.Wrap(buf, 0, len(buf)).OriginID(1).RoutedID(2).StreamID(3).
			Sequence(0).Acknowledge(0).Maximum(0).TraceID(0).Authorization(0).Affinity(0)
	}
	header()
	ex.WrapSlot(b.ExtensionBuffer()).TypeID(tid).
		Address().Inet().Protocol(proxy.ProxyAddressProtocolStream).
		Source("").Destination("example.com").SourcePort(0).DestinationPort(443)
	begin, err := b.ExtensionDone(ex.BuildLimit()).Build()
	require.NoError(t, err)
	var got proxy.ProxyBeginEx
	require.NoError(t, got.Wrap(begin.Extension(), 0, len(begin.Extension())))
	assert.Equal(t, tid, got.TypeID())
	addr := got.Address()
	inet := addr.Inet()
	assert.Equal(t, "example.com", inet.DestinationString())
	assert.Equal(t, uint16(443), inet.DestinationPort())

	header().Affinity(1) // out of order: the BEGIN fails
	_, _, ok := b.ExtensionSlot()
	require.False(t, ok)
	before := append([]byte(nil), buf...)
	ex.WrapSlot(b.ExtensionBuffer()).TypeID(tid).Address().Inet().Destination("example.com")
	_, exErr := ex.BuildLimit()
	require.Error(t, exErr)
	_, err = b.ExtensionDone(ex.BuildLimit()).Build()
	assert.ErrorIs(t, err, flyweight.ErrOrder)
	assert.NotErrorIs(t, err, exErr)
	assert.Equal(t, before, buf, "a failed extension builder writes nothing")
}
