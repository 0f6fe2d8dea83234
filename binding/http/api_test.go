package http_test

// Black-box tests of the flyweights generated from idl/http.idl. They use only
// the exported API, so a template change that breaks users fails here. The
// round-trip machinery is shared with the other bindings' tests, in
// internal/flyweighttest.

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/idl/flyweight"
	"github.com/sluicehq/sluice/internal/flyweighttest"
)

// Short names for what the tables below use most.
const cid, tid = flyweighttest.CompositeID, flyweighttest.TypeID

type enc = flyweighttest.Enc

var text, null, strOf = flyweighttest.Text, flyweighttest.Null, flyweighttest.StrOf

// ---------------------------------------------------------------------------
// Hand encoding of the expected bytes (little-endian, see idl/http.idl).

// encodeHeader encodes an HttpHeader: the name as a string8, the value as a
// string16.
func encodeHeader(h hdr) enc { return enc{}.NStr8(h.name).NStr16(h.value) }

// encodeHeaders encodes the items of an HttpHeader[], for enc.Array.
func encodeHeaders(hs ...hdr) []enc {
	items := make([]enc, len(hs))
	for i, h := range hs {
		items[i] = encodeHeader(h)
	}
	return items
}

// ---------------------------------------------------------------------------
// Decoded values.

type hdr struct{ name, value flyweighttest.NStr }

func readHeader(v *http.HttpHeader) []any {
	return []any{strOf(v.HasName(), v.Name(), v.NameString()), strOf(v.HasValue(), v.Value(), v.ValueString())}
}

type headerArray = flyweight.Array[http.HttpHeader, *http.HttpHeader]

// readHeaders returns the array's Len and its items as iterated by All.
func readHeaders(a headerArray) []any {
	var hs []hdr
	for i, h := range a.All() {
		if i != len(hs) {
			hs = append(hs, hdr{name: text(fmt.Sprintf("All yielded index %d at position %d", i, len(hs)))})
		}
		hs = append(hs, hdr{
			name:  strOf(h.HasName(), h.Name(), h.NameString()),
			value: strOf(h.HasValue(), h.Value(), h.ValueString()),
		})
	}
	return []any{a.Len(), hs}
}

func readBeginEx(v *http.HttpBeginEx) []any {
	return append([]any{v.CompositeID(), v.TypeID()}, readHeaders(v.Headers())...)
}

func readFlushEx(v *http.HttpFlushEx) []any {
	return append([]any{v.CompositeID(), v.TypeID(), v.PromiseID()}, readHeaders(v.Promise())...)
}

func readEndEx(v *http.HttpEndEx) []any {
	return append([]any{v.CompositeID(), v.TypeID()}, readHeaders(v.Trailers())...)
}

func readResetEx(v *http.HttpResetEx) []any {
	return append([]any{v.CompositeID(), v.TypeID()}, readHeaders(v.Headers())...)
}

func readChallengeEx(v *http.HttpChallengeEx) []any {
	return append([]any{v.CompositeID(), v.TypeID()}, readHeaders(v.Headers())...)
}

type headerArrayBuilder = flyweight.ArrayBuilder[http.HttpHeaderBuilder, *http.HttpHeaderBuilder, flyweight.LE]

// addHeaders adds one item per header.
func addHeaders(a *headerArrayBuilder, hs ...hdr) {
	for _, h := range hs {
		ib := a.Item()
		if h.name.Null {
			ib.NameNull()
		} else {
			ib.Name(h.name.S)
		}
		if h.value.Null {
			ib.ValueNull()
		} else {
			ib.Value(h.value.S)
		}
	}
}

// ---------------------------------------------------------------------------
// Round-trip cases.

// headerExtCases are the scenarios of the extensions whose only own field
// is an HttpHeader[] (HttpBeginEx, HttpEndEx, HttpResetEx, HttpChallengeEx).
func headerExtCases[B any, PB flyweighttest.ExtBuilder[B, V], V any, PV flyweighttest.Reader[V]](arr func(*B) *headerArrayBuilder, read func(*V) []any) []flyweighttest.Case {
	st := flyweighttest.Type[B, PB, V, PV]{Read: read}
	ids := func(b *B, c int64, t int32) *B { return PB(PB(b).CompositeID(c)).TypeID(t) }
	two := []hdr{{text(":method"), text("GET")}, {text(":path"), text("/index.html")}}
	several := []hdr{
		{text(":status"), text("200")},
		{text(""), text("")},
		{text("x-null-value"), null},
		{null, text("null name")},
		{text(strings.Repeat("n", 127)), text(strings.Repeat("v", 300))},
	}
	return []flyweighttest.Case{
		st.Scenario("two items",
			func(b *B) { addHeaders(arr(ids(b, cid, tid)), two...) },
			enc{}.I64(cid).I32(tid).Array(encodeHeaders(two...)...),
			cid, tid, 2, two),
		st.Scenario("array setter never called",
			func(b *B) { ids(b, cid, tid) },
			enc{}.I64(cid).I32(tid).Array(),
			cid, tid, 0, []hdr(nil)),
		st.Scenario("array setter called with no items",
			func(b *B) { arr(ids(b, cid, tid)) },
			enc{}.I64(cid).I32(tid).Array(),
			cid, tid, 0, []hdr(nil)),
		st.Scenario("several items with empty, null and longest strings",
			func(b *B) { addHeaders(arr(ids(b, -cid, -tid)), several...) },
			enc{}.I64(-cid).I32(-tid).Array(encodeHeaders(several...)...),
			-cid, -tid, len(several), several),
		st.Scenario("compositeId skipped takes default 0",
			func(b *B) { addHeaders(arr(PB(b).TypeID(tid)), two[:1]...) },
			enc{}.I64(0).I32(tid).Array(encodeHeaders(two[:1]...)...),
			int64(0), tid, 1, two[:1]),
	}
}

func httpCases() []flyweighttest.Case {
	header := flyweighttest.Type[http.HttpHeaderBuilder, *http.HttpHeaderBuilder, http.HttpHeader, *http.HttpHeader]{Read: readHeader}
	flush := flyweighttest.Type[http.HttpFlushExBuilder, *http.HttpFlushExBuilder, http.HttpFlushEx, *http.HttpFlushEx]{Read: readFlushEx}
	push := []hdr{{text(":method"), text("GET")}, {text(":path"), text("/style.css")}, {text(":authority"), text("example.com")}}
	long := strings.Repeat("n", 127)

	cases := []flyweighttest.Case{
		header.Scenario("all set",
			func(b *http.HttpHeaderBuilder) { b.Name("content-type").Value("application/json") },
			enc{}.NStr8(text("content-type")).NStr16(text("application/json")),
			text("content-type"), text("application/json")),
		header.Scenario("empty strings",
			func(b *http.HttpHeaderBuilder) { b.Name("").Value("") },
			enc{}.NStr8(text("")).NStr16(text("")),
			text(""), text("")),
		header.Scenario("null strings",
			func(b *http.HttpHeaderBuilder) { b.NameNull().ValueNull() },
			enc{}.NStr8(null).NStr16(null),
			null, null),
		header.Scenario("bytes setters",
			func(b *http.HttpHeaderBuilder) { b.NameBytes([]byte("x-bin")).ValueBytes([]byte{0, 0xff, 'z'}) },
			enc{}.NStr8(text("x-bin")).NStr16(text("\x00\xffz")),
			text("x-bin"), text("\x00\xffz")),
		header.Scenario("nil bytes are empty, not null",
			func(b *http.HttpHeaderBuilder) { b.NameBytes(nil).ValueBytes(nil) },
			enc{}.NStr8(text("")).NStr16(text("")),
			text(""), text("")),
		header.Scenario("longest string8 name and value over 255 bytes",
			func(b *http.HttpHeaderBuilder) { b.Name(long).Value(strings.Repeat("v", 300)) },
			enc{}.NStr8(text(long)).NStr16(text(strings.Repeat("v", 300))),
			text(long), text(strings.Repeat("v", 300))),

		flush.Scenario("all set",
			func(b *http.HttpFlushExBuilder) {
				addHeaders(b.CompositeID(cid).TypeID(tid).PromiseID(0x1112131415161718).Promise(), push...)
			},
			enc{}.I64(cid).I32(tid).I64(0x1112131415161718).Array(encodeHeaders(push...)...),
			cid, tid, int64(0x1112131415161718), 3, push),
		flush.Scenario("defaults",
			func(b *http.HttpFlushExBuilder) { b.TypeID(tid) },
			enc{}.I64(0).I32(tid).I64(0).Array(),
			int64(0), tid, int64(0), 0, []hdr(nil)),
		flush.Scenario("promiseId skipped before promise",
			func(b *http.HttpFlushExBuilder) { addHeaders(b.CompositeID(cid).TypeID(tid).Promise(), push[:2]...) },
			enc{}.I64(cid).I32(tid).I64(0).Array(encodeHeaders(push[:2]...)...),
			cid, tid, int64(0), 2, push[:2]),
		flush.Scenario("promise with no items",
			func(b *http.HttpFlushExBuilder) { b.CompositeID(cid).TypeID(tid).PromiseID(-5).Promise() },
			enc{}.I64(cid).I32(tid).I64(-5).Array(),
			cid, tid, int64(-5), 0, []hdr(nil)),
	}
	cases = append(cases, headerExtCases((*http.HttpBeginExBuilder).Headers, readBeginEx)...)
	cases = append(cases, headerExtCases((*http.HttpEndExBuilder).Trailers, readEndEx)...)
	cases = append(cases, headerExtCases((*http.HttpResetExBuilder).Headers, readResetEx)...)
	cases = append(cases, headerExtCases((*http.HttpChallengeExBuilder).Headers, readChallengeEx)...)
	return cases
}

func TestRoundTrip(t *testing.T) {
	flyweighttest.RunRoundTrip(t, httpCases())
}

// TestEncodingHttpBeginEx pins the wire format byte for byte.
func TestEncodingHttpBeginEx(t *testing.T) {
	want := []byte{
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // compositeId
		0x0d, 0x0c, 0x0b, 0x0a, // typeId
		0x20, 0x00, 0x00, 0x00, // headers: byte length of the items (13 + 19)
		0x02, 0x00, 0x00, 0x00, // headers: count
		0x07, ':', 'm', 'e', 't', 'h', 'o', 'd', // name, string8
		0x03, 0x00, 'G', 'E', 'T', // value, string16
		0x05, ':', 'p', 'a', 't', 'h', // name
		0x0b, 0x00, '/', 'i', 'n', 'd', 'e', 'x', '.', 'h', 't', 'm', 'l', // value
	}
	buf := make([]byte, 64)
	var b http.HttpBeginExBuilder
	h := b.Wrap(buf, 0, len(buf)).CompositeID(cid).TypeID(tid).Headers()
	h.Item().Name(":method").Value("GET")
	h.Item().Name(":path").Value("/index.html")
	v, err := b.Build()
	require.NoError(t, err)
	assert.Equal(t, want, buf[:v.Limit()])

	var r http.HttpBeginEx
	require.NoError(t, r.Wrap(want, 0, len(want)))
	assert.Equal(t, len(want), r.Limit())
	assert.Equal(t, []any{cid, tid, 2, []hdr{{text(":method"), text("GET")}, {text(":path"), text("/index.html")}}}, readBeginEx(&r))
}

func TestWrapTruncated(t *testing.T) {
	flyweighttest.RunWrapTruncated(t, httpCases())
}

func TestBuildOverflow(t *testing.T) {
	flyweighttest.RunBuildOverflow(t, httpCases())
}

func TestWrapErrors(t *testing.T) {
	ext := enc{}.I64(cid).I32(tid)
	item := encodeHeader(hdr{text("ab"), text("cd")}) // 7 bytes
	flyweighttest.RunWrapErrors(t, []flyweighttest.WrapError{
		{Name: "array length negative", Wrap: flyweighttest.WrapAs[http.HttpBeginEx],
			Buf: ext.I32(-1).I32(0), Want: flyweight.ErrLength, Type: "HttpBeginEx", Field: "headers"},
		{Name: "array count negative", Wrap: flyweighttest.WrapAs[http.HttpBeginEx],
			Buf: ext.I32(0).I32(-1), Want: flyweight.ErrLength, Type: "HttpBeginEx", Field: "headers"},
		{Name: "array count max int32 with no items", Wrap: flyweighttest.WrapAs[http.HttpBeginEx],
			Buf: ext.I32(0).I32(1<<31 - 1), Want: flyweight.ErrLength, Type: "HttpBeginEx", Field: "headers"},
		{Name: "array count max int32 with one item", Wrap: flyweighttest.WrapAs[http.HttpEndEx],
			Buf: ext.I32(int32(len(item))).I32(1<<31 - 1).Add(item...), Want: flyweight.ErrLength, Type: "HttpEndEx", Field: "trailers"},
		{Name: "array count more than the items", Wrap: flyweighttest.WrapAs[http.HttpBeginEx],
			Buf: ext.I32(int32(len(item))).I32(2).Add(item...), Want: flyweight.ErrLength, Type: "HttpBeginEx", Field: "headers"},
		{Name: "array count fewer than the items", Wrap: flyweighttest.WrapAs[http.HttpResetEx],
			Buf: ext.I32(int32(2 * len(item))).I32(1).Add(item...).Add(item...), Want: flyweight.ErrLength, Type: "HttpResetEx", Field: "headers"},
		{Name: "array length past the end", Wrap: flyweighttest.WrapAs[http.HttpBeginEx],
			Buf: ext.I32(1000).I32(1).Add(item...), Want: flyweight.ErrShort, Type: "HttpBeginEx", Field: "headers"},
		{Name: "array length max int32", Wrap: flyweighttest.WrapAs[http.HttpChallengeEx],
			Buf: ext.I32(1<<31 - 1).I32(1).Add(item...), Want: flyweight.ErrShort, Type: "HttpChallengeEx", Field: "headers"},
		{Name: "item name overruns the array length", Wrap: flyweighttest.WrapAs[http.HttpBeginEx],
			Buf: ext.I32(3).I32(1).Add(item...), Want: flyweight.ErrLength, Type: "HttpBeginEx", Field: "headers"},
		{Name: "item name length -2", Wrap: flyweighttest.WrapAs[http.HttpBeginEx],
			Buf: ext.I32(3).I32(1).Add(0xfe, 0x00, 0x00), Want: flyweight.ErrLength, Type: "HttpBeginEx", Field: "headers"},
		{Name: "item value length -2", Wrap: flyweighttest.WrapAs[http.HttpFlushEx],
			Buf: ext.I64(0).I32(3).I32(1).Add(0x00, 0xfe, 0xff), Want: flyweight.ErrLength, Type: "HttpFlushEx", Field: "promise"},
		{Name: "name length -2", Wrap: flyweighttest.WrapAs[http.HttpHeader],
			Buf: enc{}.Add(0xfe).NStr16(text("v")), Want: flyweight.ErrLength, Type: "HttpHeader", Field: "name"},
		{Name: "name length -128", Wrap: flyweighttest.WrapAs[http.HttpHeader],
			Buf: enc{}.Add(0x80).NStr16(text("v")), Want: flyweight.ErrLength, Type: "HttpHeader", Field: "name"},
		{Name: "value length -2", Wrap: flyweighttest.WrapAs[http.HttpHeader],
			Buf: enc{}.NStr8(text("n")).Add(0xfe, 0xff), Want: flyweight.ErrLength, Type: "HttpHeader", Field: "value"},
		{Name: "value length -32768", Wrap: flyweighttest.WrapAs[http.HttpHeader],
			Buf: enc{}.NStr8(text("n")).Add(0x00, 0x80), Want: flyweight.ErrLength, Type: "HttpHeader", Field: "value"},
		{Name: "name longer than the buffer", Wrap: flyweighttest.WrapAs[http.HttpHeader],
			Buf: enc{}.Add(0x7f, 'a', 'b'), Want: flyweight.ErrShort, Type: "HttpHeader", Field: "name"},
		{Name: "value length max int16", Wrap: flyweighttest.WrapAs[http.HttpHeader],
			Buf: enc{}.NStr8(text("n")).Add(0xff, 0x7f, 'v'), Want: flyweight.ErrShort, Type: "HttpHeader", Field: "value"},
	})
}

func TestWrapBounds(t *testing.T) {
	buf := encodeHeader(hdr{text("a"), text("b")})
	flyweighttest.RunWrapBounds(t, buf, func(t *testing.T, off, limit int) {
		var v http.HttpHeader
		err := v.Wrap(buf, off, limit)
		assert.ErrorIs(t, err, flyweight.ErrBounds)
		assert.False(t, v.TryWrap(buf, off, limit))
		var b http.HttpBeginEx
		assert.ErrorIs(t, b.Wrap(buf, off, limit), flyweight.ErrBounds)
	})
}

func TestBuildErrors(t *testing.T) {
	errCustom := errors.New("custom")
	flyweighttest.RunBuildErrors(t, []flyweighttest.BuildError{
		{Name: "header with nothing set", Build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "HttpHeader", Field: "name"},
		{Name: "header without name", Build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Value("v").Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "HttpHeader", Field: "name"},
		{Name: "header without value", Build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Name("n").Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "HttpHeader", Field: "value"},
		{Name: "typeId missing", Build: func(buf []byte) error {
			var b http.HttpBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).CompositeID(1).Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "HttpBeginEx", Field: "typeId"},
		{Name: "typeId missing before the array", Build: func(buf []byte) error {
			var b http.HttpBeginExBuilder
			addHeaders(b.Wrap(buf, 0, len(buf)).Headers(), hdr{text("a"), text("b")})
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "HttpBeginEx", Field: "typeId"},
		{Name: "item without name", Build: func(buf []byte) error {
			var b http.HttpEndExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(1).Trailers().Item().Value("v")
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "HttpHeader", Field: "name"},
		{Name: "item without value, then another item", Build: func(buf []byte) error {
			var b http.HttpResetExBuilder
			h := b.Wrap(buf, 0, len(buf)).TypeID(1).Headers()
			h.Item().Name("n")
			h.Item().Name("m").Value("v")
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrMissing, Type: "HttpHeader", Field: "value"},
		{Name: "compositeId after typeId", Build: func(buf []byte) error {
			var b http.HttpBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).TypeID(1).CompositeID(2).Build()
			return err
		}, Want: flyweight.ErrOrder, Type: "HttpBeginEx", Field: "compositeId"},
		{Name: "typeId twice", Build: func(buf []byte) error {
			var b http.HttpChallengeExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).TypeID(1).TypeID(2).Build()
			return err
		}, Want: flyweight.ErrOrder, Type: "HttpChallengeEx", Field: "typeId"},
		{Name: "array setter twice", Build: func(buf []byte) error {
			var b http.HttpBeginExBuilder
			addHeaders(b.Wrap(buf, 0, len(buf)).TypeID(1).Headers(), hdr{text("a"), text("b")})
			addHeaders(b.Headers(), hdr{text("c"), text("d")})
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrOrder, Type: "HttpBeginEx", Field: "headers"},
		{Name: "promiseId after promise", Build: func(buf []byte) error {
			var b http.HttpFlushExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(1).Promise()
			_, err := b.PromiseID(3).Build()
			return err
		}, Want: flyweight.ErrOrder, Type: "HttpFlushEx", Field: "promiseId"},
		{Name: "header name after value", Build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Name("a").Value("b").Name("c").Build()
			return err
		}, Want: flyweight.ErrOrder, Type: "HttpHeader", Field: "name"},
		{Name: "name too long for string8", Build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Name(strings.Repeat("n", 128)).Value("v").Build()
			return err
		}, Want: flyweight.ErrRange, Type: "HttpHeader", Field: "name"},
		{Name: "name bytes too long for string8", Build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			_, err := b.Wrap(buf, 0, len(buf)).NameBytes(make([]byte, 200)).Value("v").Build()
			return err
		}, Want: flyweight.ErrRange, Type: "HttpHeader", Field: "name"},
		{Name: "item name too long for string8", Build: func(buf []byte) error {
			var b http.HttpBeginExBuilder
			addHeaders(b.Wrap(buf, 0, len(buf)).TypeID(1).Headers(), hdr{text(strings.Repeat("n", 128)), text("v")})
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrRange, Type: "HttpHeader", Field: "name"},
		{Name: "value too long for string16", Build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Name("n").Value(strings.Repeat("v", 1<<15)).Build()
			return err
		}, Want: flyweight.ErrRange, Type: "HttpHeader", Field: "value"},
		{Name: "tiny buffer", Build: func(buf []byte) error {
			var b http.HttpBeginExBuilder
			addHeaders(b.Wrap(buf, 0, 4).CompositeID(1).TypeID(2).Headers(), hdr{text("a"), text("b")})
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrOverflow, Type: "HttpBeginEx", Field: "compositeId"},
		{Name: "no room for an item", Build: func(buf []byte) error {
			var b http.HttpBeginExBuilder
			addHeaders(b.Wrap(buf, 0, 22).CompositeID(1).TypeID(2).Headers(), hdr{text("a"), text("b")})
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrOverflow, Type: "HttpHeader", Field: "value"},
		{Name: "offset past maxLimit", Build: func(buf []byte) error {
			var b http.HttpBeginExBuilder
			_, err := b.Wrap(buf, 8, 4).TypeID(1).Build()
			return err
		}, Want: flyweight.ErrBounds, Type: "HttpBeginEx"},
		{Name: "maxLimit past the buffer", Build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			_, err := b.Wrap(buf, 0, len(buf)+1).Name("n").Value("v").Build()
			return err
		}, Want: flyweight.ErrBounds, Type: "HttpHeader"},
		{Name: "errors are sticky", Build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			b.Wrap(buf, 0, len(buf)).Name(strings.Repeat("n", 128)).NameNull().Value("v")
			_, err := b.Build()
			return err
		}, Want: flyweight.ErrRange, Type: "HttpHeader", Field: "name"},
		{Name: "Fail", Build: func(buf []byte) error {
			var b http.HttpFlushExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).TypeID(1).Fail(errCustom).PromiseID(2).Build()
			return err
		}, Want: errCustom},
	})
}

// TestBuildFailedReturnsZeroView checks that a failed Build returns no view.
func TestBuildFailedReturnsZeroView(t *testing.T) {
	var b http.HttpBeginExBuilder
	v, err := b.Wrap(make([]byte, 64), 0, 64).CompositeID(1).Build()
	require.ErrorIs(t, err, flyweight.ErrMissing)
	assert.Equal(t, http.HttpBeginEx{}, v)
}

func TestSetInPlace(t *testing.T) {
	push := []hdr{{text(":path"), text("/a")}}
	buf := enc{}.I64(cid).I32(tid).I64(9).Array(encodeHeaders(push...)...)
	var v http.HttpFlushEx
	require.NoError(t, v.Wrap(buf, 0, len(buf)))
	v.SetCompositeID(-1)
	v.SetTypeID(-2)
	v.SetPromiseID(-3)
	var r http.HttpFlushEx
	require.NoError(t, r.Wrap(buf, 0, len(buf)))
	assert.Equal(t, []any{int64(-1), int32(-2), int64(-3), 1, push}, readFlushEx(&r))

	for _, tc := range []struct {
		name   string
		setExt func(buf []byte, off int) (int64, int32, error)
	}{
		{name: "HttpBeginEx", setExt: setExt[http.HttpBeginEx]},
		{name: "HttpEndEx", setExt: setExt[http.HttpEndEx]},
		{name: "HttpResetEx", setExt: setExt[http.HttpResetEx]},
		{name: "HttpChallengeEx", setExt: setExt[http.HttpChallengeEx]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf := []byte(enc{}.Add(1, 2, 3).I64(0).I32(0).Array(encodeHeaders(push...)...))
			c, ty, err := tc.setExt(buf, 3)
			require.NoError(t, err)
			assert.Equal(t, cid, c)
			assert.Equal(t, tid, ty)
			assert.Equal(t, []byte{1, 2, 3}, buf[:3], "bytes before the value")
			assert.Equal(t, []byte(enc{}.Array(encodeHeaders(push...)...)), buf[15:], "the array")
		})
	}
}

// setExt wraps a V at buf[off:] and sets its compositeId and typeId to cid
// and tid, then reads them back through a view wrapped afresh.
func setExt[V any, PV interface {
	flyweighttest.Reader[V]
	SetCompositeID(int64)
	SetTypeID(int32)
	CompositeID() int64
	TypeID() int32
}](buf []byte, off int) (int64, int32, error) {
	var v V
	if err := PV(&v).Wrap(buf, off, len(buf)); err != nil {
		return 0, 0, err
	}
	PV(&v).SetCompositeID(cid)
	PV(&v).SetTypeID(tid)
	var r V
	err := PV(&r).Wrap(buf, off, len(buf))
	return PV(&r).CompositeID(), PV(&r).TypeID(), err
}

// TestGettersAlias checks that string getters view the buffer without
// copying, and that appending to one cannot overwrite the next field.
func TestGettersAlias(t *testing.T) {
	buf := encodeHeader(hdr{text("ab"), text("cd")})
	var v http.HttpHeader
	require.NoError(t, v.Wrap(buf, 0, len(buf)))
	name := v.Name()
	assert.Equal(t, len(name), cap(name), "Name() capacity")
	_ = append(name, 'X', 'Y', 'Z')
	assert.Equal(t, "cd", v.ValueString(), "append to Name() overwrote value")
	buf[1] = 'z'
	assert.Equal(t, "zb", v.NameString(), "Name() must alias the buffer")
}

// TestArrayAllStopsEarly checks that breaking out of All stops the iteration.
func TestArrayAllStopsEarly(t *testing.T) {
	hs := []hdr{{text("a"), text("1")}, {text("b"), text("2")}, {text("c"), text("3")}}
	buf := enc{}.I64(cid).I32(tid).Array(encodeHeaders(hs...)...)
	var v http.HttpBeginEx
	require.NoError(t, v.Wrap(buf, 0, len(buf)))
	var seen []string
	for i, h := range v.Headers().All() {
		seen = append(seen, h.NameString())
		if i == 1 {
			break
		}
	}
	assert.Equal(t, []string{"a", "b"}, seen)
}

// Wrapping an extension validates its header array without allocating:
// the generated code wraps each item as its concrete type, on the stack.
// requestBeginEx builds an HttpBeginEx with three request headers.
func requestBeginEx(t *testing.T) (buf []byte, n int) {
	buf = make([]byte, 512)
	var b http.HttpBeginExBuilder
	addHeaders(b.Wrap(buf, 0, len(buf)).CompositeID(1).TypeID(2).Headers(),
		hdr{text(":method"), text("POST")}, hdr{text(":path"), text("/mcp")}, hdr{text("content-type"), text("application/json")})
	n, err := b.BuildLimit()
	require.NoError(t, err)
	return buf, n
}

func TestBeginExWrapAllocatesNothing(t *testing.T) {
	buf, n := requestBeginEx(t)
	var ex http.HttpBeginEx
	allocs := testing.AllocsPerRun(100, func() {
		if !ex.TryWrap(buf, 0, n) {
			t.Fatal("wrap failed")
		}
	})
	require.Zero(t, allocs)
	require.Equal(t, 3, ex.Headers().Len())
}

// TestHeaderCursorAllocatesNothing: walking a BeginEx's headers with a
// Cursor and a view on the stack allocates nothing (All allocates its
// view and its iterator), and sees the same headers as All.
func TestHeaderCursorAllocatesNothing(t *testing.T) {
	buf, n := requestBeginEx(t)
	var ex http.HttpBeginEx
	require.True(t, ex.TryWrap(buf, 0, n))
	var viaAll []string
	for _, hd := range ex.Headers().All() {
		viaAll = append(viaAll, string(hd.Name())+"="+string(hd.Value()))
	}
	var viaCursor []string
	var hd http.HttpHeader
	for c := ex.Headers().Cursor(); http.NextHeader(&c, &hd); {
		viaCursor = append(viaCursor, string(hd.Name())+"="+string(hd.Value()))
	}
	require.Equal(t, viaAll, viaCursor)
	require.Len(t, viaCursor, 3)
	sum := 0
	allocs := testing.AllocsPerRun(100, func() {
		var hd http.HttpHeader
		for c := ex.Headers().Cursor(); http.NextHeader(&c, &hd); {
			sum += len(hd.Value())
		}
	})
	require.Zero(t, allocs)
	require.Positive(t, sum)
}
