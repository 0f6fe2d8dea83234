package http_test

// Black-box tests of the flyweights generated from idl/http.idl. They use only
// the exported API, so a template change that breaks users fails here.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/idl/flyweight"
)

// Distinctive values: every byte differs, so a wrong width, offset or byte
// order shows.
const (
	cid int64 = 0x0102030405060708
	tid int32 = 0x0a0b0c0d
)

// sentinel fills the bytes a builder must not touch.
const sentinel = 0xa5

// ---------------------------------------------------------------------------
// Hand encoding of the expected bytes (little-endian, see idl/http.idl).

type enc []byte

// add appends to a copy, so that encodings sharing a prefix never alias.
func (e enc) add(b ...byte) enc { return append(e[:len(e):len(e)], b...) }

func (e enc) i32(v int32) enc { return e.add(binary.LittleEndian.AppendUint32(nil, uint32(v))...) }
func (e enc) i64(v int64) enc { return e.add(binary.LittleEndian.AppendUint64(nil, uint64(v))...) }

// str8 is a string8: an int8 length, -1 for null, then the bytes.
func (e enc) str8(s nstr) enc {
	if s.null {
		return e.add(0xff)
	}
	return e.add(byte(len(s.s))).add([]byte(s.s)...)
}

// str16 is a string16: an int16 length, -1 for null, then the bytes.
func (e enc) str16(s nstr) enc {
	if s.null {
		return e.add(0xff, 0xff)
	}
	return e.add(binary.LittleEndian.AppendUint16(nil, uint16(len(s.s)))...).add([]byte(s.s)...)
}

func (e enc) header(h hdr) enc { return e.str8(h.name).str16(h.value) }

// headers is an HttpHeader[]: int32 byte length of the items, int32 count,
// then the items.
func (e enc) headers(hs ...hdr) enc {
	var items enc
	for _, h := range hs {
		items = items.header(h)
	}
	return e.i32(int32(len(items))).i32(int32(len(hs))).add(items...)
}

// ---------------------------------------------------------------------------
// Decoded values.

// nstr is a decoded string field: its text, or null.
type nstr struct {
	null bool
	s    string
}

func text(s string) nstr { return nstr{s: s} }

var null = nstr{null: true}

// strOf reads a string field through its three getters (HasX, X, XString)
// and folds them into one value; getters that disagree give a value that
// matches nothing.
func strOf(has bool, b []byte, s string) nstr {
	if has != (b != nil) || s != string(b) || cap(b) != len(b) {
		return nstr{s: fmt.Sprintf("inconsistent getters: Has=%v bytes=%q (cap %d) string=%q", has, b, cap(b), s)}
	}
	if !has {
		return null
	}
	return text(s)
}

type hdr struct{ name, value nstr }

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
		if h.name.null {
			ib.NameNull()
		} else {
			ib.Name(h.name.s)
		}
		if h.value.null {
			ib.ValueNull()
		} else {
			ib.Value(h.value.s)
		}
	}
}

// ---------------------------------------------------------------------------
// Type-erased round-trip cases.

// reader is the API every generated view has.
type reader[V any] interface {
	*V
	Wrap(buf []byte, off, limit int) error
	TryWrap(buf []byte, off, limit int) bool
	Offset() int
	Limit() int
	Sizeof() int
	Buffer() []byte
}

// builder is the API every generated builder has.
type builder[B, V any] interface {
	*B
	Wrap(buf []byte, off, maxLimit int) *B
	Build() (V, error)
	BuildLimit() (int, error)
	Limit() int
}

// span is what a reader says about where its value lies.
type span struct {
	off, limit, size int
	sameBuf          bool // Buffer() is the wrapped slice
	try              bool // TryWrap's answer
}

// structCase is one scenario of one generated type, erased of its types.
type structCase struct {
	name string
	typ  string // the Go type name, as reported in *flyweight.Error
	body enc    // the expected encoding
	want []any  // the expected getter values
	// build runs the scenario's setters at buf[off:maxLimit], then Build,
	// and reads the returned view.
	build func(buf []byte, off, maxLimit int) (limit int, got []any, err error)
	// buildLimit runs the setters, then BuildLimit; builderLimit is the
	// builder's Limit() afterwards.
	buildLimit func(buf []byte, off, maxLimit int) (limit, builderLimit int, err error)
	// wrap wraps a fresh reader over buf[off:limit] and reads it.
	wrap func(buf []byte, off, limit int) (span, []any, error)
}

type structType[B any, PB builder[B, V], V any, PV reader[V]] struct {
	read func(*V) []any
}

func typeName[V any]() string { return reflect.TypeFor[V]().Name() }

func (st structType[B, PB, V, PV]) scenario(name string, set func(*B), body enc, want ...any) structCase {
	typ := typeName[V]()
	start := func(buf []byte, off, maxLimit int) PB {
		var b B
		PB(&b).Wrap(buf, off, maxLimit)
		if set != nil {
			set(&b)
		}
		return &b
	}
	return structCase{
		name: typ + "/" + name,
		typ:  typ,
		body: body,
		want: want,
		build: func(buf []byte, off, maxLimit int) (int, []any, error) {
			v, err := start(buf, off, maxLimit).Build()
			if err != nil {
				return 0, nil, err
			}
			return PV(&v).Limit(), st.read(&v), nil
		},
		buildLimit: func(buf []byte, off, maxLimit int) (int, int, error) {
			b := start(buf, off, maxLimit)
			limit, err := b.BuildLimit()
			return limit, b.Limit(), err
		},
		wrap: func(buf []byte, off, limit int) (span, []any, error) {
			var probe V
			sp := span{try: PV(&probe).TryWrap(buf, off, limit)}
			var v V
			if err := PV(&v).Wrap(buf, off, limit); err != nil {
				return sp, nil, err
			}
			b := PV(&v).Buffer()
			sp.off, sp.limit, sp.size = PV(&v).Offset(), PV(&v).Limit(), PV(&v).Sizeof()
			sp.sameBuf = len(b) == len(buf) && (len(b) == 0 || &b[0] == &buf[0])
			return sp, st.read(&v), nil
		},
	}
}

// extBuilder is a builder of a struct that extends core::stream::Extension.
type extBuilder[B, V any] interface {
	builder[B, V]
	CompositeID(int64) *B
	TypeID(int32) *B
}

// headerExtCases are the scenarios of the extensions whose only own field
// is an HttpHeader[] (HttpBeginEx, HttpEndEx, HttpResetEx, HttpChallengeEx).
func headerExtCases[B any, PB extBuilder[B, V], V any, PV reader[V]](arr func(*B) *headerArrayBuilder, read func(*V) []any) []structCase {
	st := structType[B, PB, V, PV]{read: read}
	ids := func(b *B, c int64, t int32) *B { return PB(PB(b).CompositeID(c)).TypeID(t) }
	two := []hdr{{text(":method"), text("GET")}, {text(":path"), text("/index.html")}}
	several := []hdr{
		{text(":status"), text("200")},
		{text(""), text("")},
		{text("x-null-value"), null},
		{null, text("null name")},
		{text(strings.Repeat("n", 127)), text(strings.Repeat("v", 300))},
	}
	return []structCase{
		st.scenario("two items",
			func(b *B) { addHeaders(arr(ids(b, cid, tid)), two...) },
			enc{}.i64(cid).i32(tid).headers(two...),
			cid, tid, 2, two),
		st.scenario("array setter never called",
			func(b *B) { ids(b, cid, tid) },
			enc{}.i64(cid).i32(tid).headers(),
			cid, tid, 0, []hdr(nil)),
		st.scenario("array setter called with no items",
			func(b *B) { arr(ids(b, cid, tid)) },
			enc{}.i64(cid).i32(tid).headers(),
			cid, tid, 0, []hdr(nil)),
		st.scenario("several items with empty, null and longest strings",
			func(b *B) { addHeaders(arr(ids(b, -cid, -tid)), several...) },
			enc{}.i64(-cid).i32(-tid).headers(several...),
			-cid, -tid, len(several), several),
		st.scenario("compositeId skipped takes default 0",
			func(b *B) { addHeaders(arr(PB(b).TypeID(tid)), two[:1]...) },
			enc{}.i64(0).i32(tid).headers(two[:1]...),
			int64(0), tid, 1, two[:1]),
	}
}

func httpCases() []structCase {
	header := structType[http.HttpHeaderBuilder, *http.HttpHeaderBuilder, http.HttpHeader, *http.HttpHeader]{read: readHeader}
	flush := structType[http.HttpFlushExBuilder, *http.HttpFlushExBuilder, http.HttpFlushEx, *http.HttpFlushEx]{read: readFlushEx}
	push := []hdr{{text(":method"), text("GET")}, {text(":path"), text("/style.css")}, {text(":authority"), text("example.com")}}
	long := strings.Repeat("n", 127)

	cases := []structCase{
		header.scenario("all set",
			func(b *http.HttpHeaderBuilder) { b.Name("content-type").Value("application/json") },
			enc{}.str8(text("content-type")).str16(text("application/json")),
			text("content-type"), text("application/json")),
		header.scenario("empty strings",
			func(b *http.HttpHeaderBuilder) { b.Name("").Value("") },
			enc{}.str8(text("")).str16(text("")),
			text(""), text("")),
		header.scenario("null strings",
			func(b *http.HttpHeaderBuilder) { b.NameNull().ValueNull() },
			enc{}.str8(null).str16(null),
			null, null),
		header.scenario("bytes setters",
			func(b *http.HttpHeaderBuilder) { b.NameBytes([]byte("x-bin")).ValueBytes([]byte{0, 0xff, 'z'}) },
			enc{}.str8(text("x-bin")).str16(text("\x00\xffz")),
			text("x-bin"), text("\x00\xffz")),
		header.scenario("nil bytes are empty, not null",
			func(b *http.HttpHeaderBuilder) { b.NameBytes(nil).ValueBytes(nil) },
			enc{}.str8(text("")).str16(text("")),
			text(""), text("")),
		header.scenario("longest string8 name and value over 255 bytes",
			func(b *http.HttpHeaderBuilder) { b.Name(long).Value(strings.Repeat("v", 300)) },
			enc{}.str8(text(long)).str16(text(strings.Repeat("v", 300))),
			text(long), text(strings.Repeat("v", 300))),

		flush.scenario("all set",
			func(b *http.HttpFlushExBuilder) {
				addHeaders(b.CompositeID(cid).TypeID(tid).PromiseID(0x1112131415161718).Promise(), push...)
			},
			enc{}.i64(cid).i32(tid).i64(0x1112131415161718).headers(push...),
			cid, tid, int64(0x1112131415161718), 3, push),
		flush.scenario("defaults",
			func(b *http.HttpFlushExBuilder) { b.TypeID(tid) },
			enc{}.i64(0).i32(tid).i64(0).headers(),
			int64(0), tid, int64(0), 0, []hdr(nil)),
		flush.scenario("promiseId skipped before promise",
			func(b *http.HttpFlushExBuilder) { addHeaders(b.CompositeID(cid).TypeID(tid).Promise(), push[:2]...) },
			enc{}.i64(cid).i32(tid).i64(0).headers(push[:2]...),
			cid, tid, int64(0), 2, push[:2]),
		flush.scenario("promise with no items",
			func(b *http.HttpFlushExBuilder) { b.CompositeID(cid).TypeID(tid).PromiseID(-5).Promise() },
			enc{}.i64(cid).i32(tid).i64(-5).headers(),
			cid, tid, int64(-5), 0, []hdr(nil)),
	}
	cases = append(cases, headerExtCases((*http.HttpBeginExBuilder).Headers, readBeginEx)...)
	cases = append(cases, headerExtCases((*http.HttpEndExBuilder).Trailers, readEndEx)...)
	cases = append(cases, headerExtCases((*http.HttpResetExBuilder).Headers, readResetEx)...)
	cases = append(cases, headerExtCases((*http.HttpChallengeExBuilder).Headers, readChallengeEx)...)
	return cases
}

func filled(n int, b byte) []byte {
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = b
	}
	return buf
}

// assertUntouched checks that the builder left b as filled.
func assertUntouched(t *testing.T, b []byte, what string) {
	t.Helper()
	for i, c := range b {
		if c != sentinel {
			assert.Failf(t, "builder wrote outside its value", "%s: byte %d is %#x", what, i, c)
			return
		}
	}
}

// checkRoundTrip builds c at buf[off:], compares the bytes with c.body, and
// reads them back with Build's view, a fresh reader, and a fresh reader over
// the hand-encoded body.
func checkRoundTrip(t *testing.T, c structCase, off int) {
	t.Helper()
	const pad = 16
	buf := filled(off+len(c.body)+pad, sentinel)
	limit, got, err := c.build(buf, off, len(buf))
	require.NoError(t, err, "Build")
	assert.Equal(t, c.want, got, "getters of the view Build returned")
	require.GreaterOrEqual(t, limit, off, "Build's view ends before it starts")
	assert.Equal(t, off+len(c.body), limit, "Build's view Limit()")
	assert.Equal(t, []byte(c.body), buf[off:limit], "encoding")
	assertUntouched(t, buf[:off], "before the value")
	assertUntouched(t, buf[limit:], "after the value")

	buf2 := filled(len(buf), sentinel)
	limit2, builderLimit, err := c.buildLimit(buf2, off, len(buf2))
	require.NoError(t, err, "BuildLimit")
	assert.Equal(t, limit, limit2, "BuildLimit")
	assert.Equal(t, limit, builderLimit, "builder Limit() after BuildLimit")
	assert.Equal(t, buf, buf2, "Build and BuildLimit write the same bytes")

	sp, got, err := c.wrap(buf, off, limit)
	require.NoError(t, err, "Wrap of the built bytes")
	assert.Equal(t, c.want, got, "getters of a fresh reader")
	assert.Equal(t, span{off: off, limit: limit, size: limit - off, sameBuf: true, try: true}, sp)
	assert.Equal(t, sp.off+sp.size, sp.limit, "Limit() == Offset() + Sizeof()")

	sp, _, err = c.wrap(buf, off, len(buf))
	require.NoError(t, err, "Wrap with bytes after the value")
	assert.Equal(t, limit, sp.limit, "bytes after the value are not part of it")

	hand := enc(filled(off, 0x5a)).add(c.body...)
	sp, got, err = c.wrap(hand, off, len(hand))
	require.NoError(t, err, "Wrap of the hand-encoded bytes")
	assert.Equal(t, c.want, got, "getters over the hand-encoded bytes")
	assert.Equal(t, len(hand), sp.limit, "Limit() over the hand-encoded bytes")
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range httpCases() {
		t.Run(tc.name, func(t *testing.T) {
			for _, off := range []int{0, 7} {
				t.Run(fmt.Sprintf("offset %d", off), func(t *testing.T) {
					checkRoundTrip(t, tc, off)
				})
			}
		})
	}
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
	for _, tc := range httpCases() {
		t.Run(tc.name, func(t *testing.T) {
			full := []byte(tc.body)
			for k := 0; k < len(full); k++ {
				for _, buf := range [][]byte{full[:k:k], full} {
					sp, _, err := tc.wrap(buf, 0, k)
					require.Errorf(t, err, "Wrap of %d of %d bytes", k, len(full))
					assert.ErrorIsf(t, err, flyweight.ErrShort, "Wrap of %d of %d bytes", k, len(full))
					assert.Falsef(t, sp.try, "TryWrap of %d of %d bytes", k, len(full))
					var fe *flyweight.Error
					if assert.ErrorAs(t, err, &fe) {
						assert.Equal(t, tc.typ, fe.Type)
						assert.NotEmpty(t, fe.Field, "the field in which the buffer ends")
					}
				}
			}
		})
	}
}

func TestBuildOverflow(t *testing.T) {
	for _, tc := range httpCases() {
		t.Run(tc.name, func(t *testing.T) {
			const off = 3
			for k := 0; k < len(tc.body); k++ {
				buf := filled(off+len(tc.body)+8, sentinel)
				_, _, err := tc.build(buf, off, off+k)
				require.Errorf(t, err, "Build with room for %d of %d bytes", k, len(tc.body))
				assert.ErrorIsf(t, err, flyweight.ErrOverflow, "Build with room for %d of %d bytes", k, len(tc.body))
				assertUntouched(t, buf[:off], "before the value")
				assertUntouched(t, buf[off+k:], fmt.Sprintf("past maxLimit %d", off+k))
			}
		})
	}
}

// wrapAs wraps a fresh V over all of buf.
func wrapAs[V any, PV reader[V]](buf []byte) error {
	var v V
	return PV(&v).Wrap(buf, 0, len(buf))
}

func TestWrapErrors(t *testing.T) {
	ext := enc{}.i64(cid).i32(tid)
	item := enc{}.header(hdr{text("ab"), text("cd")}) // 7 bytes
	tests := []struct {
		name  string
		wrap  func([]byte) error
		buf   enc
		want  error
		typ   string
		field string
	}{
		{name: "array length negative", wrap: wrapAs[http.HttpBeginEx],
			buf: ext.i32(-1).i32(0), want: flyweight.ErrLength, typ: "HttpBeginEx", field: "headers"},
		{name: "array count negative", wrap: wrapAs[http.HttpBeginEx],
			buf: ext.i32(0).i32(-1), want: flyweight.ErrLength, typ: "HttpBeginEx", field: "headers"},
		{name: "array count max int32 with no items", wrap: wrapAs[http.HttpBeginEx],
			buf: ext.i32(0).i32(1<<31 - 1), want: flyweight.ErrLength, typ: "HttpBeginEx", field: "headers"},
		{name: "array count max int32 with one item", wrap: wrapAs[http.HttpEndEx],
			buf: ext.i32(int32(len(item))).i32(1<<31 - 1).add(item...), want: flyweight.ErrLength, typ: "HttpEndEx", field: "trailers"},
		{name: "array count more than the items", wrap: wrapAs[http.HttpBeginEx],
			buf: ext.i32(int32(len(item))).i32(2).add(item...), want: flyweight.ErrLength, typ: "HttpBeginEx", field: "headers"},
		{name: "array count fewer than the items", wrap: wrapAs[http.HttpResetEx],
			buf: ext.i32(int32(2 * len(item))).i32(1).add(item...).add(item...), want: flyweight.ErrLength, typ: "HttpResetEx", field: "headers"},
		{name: "array length past the end", wrap: wrapAs[http.HttpBeginEx],
			buf: ext.i32(1000).i32(1).add(item...), want: flyweight.ErrShort, typ: "HttpBeginEx", field: "headers"},
		{name: "array length max int32", wrap: wrapAs[http.HttpChallengeEx],
			buf: ext.i32(1<<31 - 1).i32(1).add(item...), want: flyweight.ErrShort, typ: "HttpChallengeEx", field: "headers"},
		{name: "item name overruns the array length", wrap: wrapAs[http.HttpBeginEx],
			buf: ext.i32(3).i32(1).add(item...), want: flyweight.ErrLength, typ: "HttpBeginEx", field: "headers"},
		{name: "item name length -2", wrap: wrapAs[http.HttpBeginEx],
			buf: ext.i32(3).i32(1).add(0xfe, 0x00, 0x00), want: flyweight.ErrLength, typ: "HttpBeginEx", field: "headers"},
		{name: "item value length -2", wrap: wrapAs[http.HttpFlushEx],
			buf: ext.i64(0).i32(3).i32(1).add(0x00, 0xfe, 0xff), want: flyweight.ErrLength, typ: "HttpFlushEx", field: "promise"},
		{name: "name length -2", wrap: wrapAs[http.HttpHeader],
			buf: enc{}.add(0xfe).str16(text("v")), want: flyweight.ErrLength, typ: "HttpHeader", field: "name"},
		{name: "name length -128", wrap: wrapAs[http.HttpHeader],
			buf: enc{}.add(0x80).str16(text("v")), want: flyweight.ErrLength, typ: "HttpHeader", field: "name"},
		{name: "value length -2", wrap: wrapAs[http.HttpHeader],
			buf: enc{}.str8(text("n")).add(0xfe, 0xff), want: flyweight.ErrLength, typ: "HttpHeader", field: "value"},
		{name: "value length -32768", wrap: wrapAs[http.HttpHeader],
			buf: enc{}.str8(text("n")).add(0x00, 0x80), want: flyweight.ErrLength, typ: "HttpHeader", field: "value"},
		{name: "name longer than the buffer", wrap: wrapAs[http.HttpHeader],
			buf: enc{}.add(0x7f, 'a', 'b'), want: flyweight.ErrShort, typ: "HttpHeader", field: "name"},
		{name: "value length max int16", wrap: wrapAs[http.HttpHeader],
			buf: enc{}.str8(text("n")).add(0xff, 0x7f, 'v'), want: flyweight.ErrShort, typ: "HttpHeader", field: "value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.wrap(tc.buf)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			var fe *flyweight.Error
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.typ, fe.Type)
			assert.Equal(t, tc.field, fe.Field)
			assert.Contains(t, err.Error(), tc.typ+"."+tc.field)
		})
	}
}

func TestWrapBounds(t *testing.T) {
	buf := enc{}.header(hdr{text("a"), text("b")})
	tests := []struct {
		name       string
		off, limit int
	}{
		{name: "negative offset", off: -1, limit: len(buf)},
		{name: "offset past limit", off: 3, limit: 2},
		{name: "limit past the buffer", off: 0, limit: len(buf) + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var v http.HttpHeader
			err := v.Wrap(buf, tc.off, tc.limit)
			assert.ErrorIs(t, err, flyweight.ErrBounds)
			assert.False(t, v.TryWrap(buf, tc.off, tc.limit))
			var b http.HttpBeginEx
			assert.ErrorIs(t, b.Wrap(buf, tc.off, tc.limit), flyweight.ErrBounds)
		})
	}
}

func TestBuildErrors(t *testing.T) {
	errCustom := errors.New("custom")
	tests := []struct {
		name  string
		build func(buf []byte) error
		want  error
		typ   string // "" when the error is not a *flyweight.Error
		field string
	}{
		{name: "header with nothing set", build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Build()
			return err
		}, want: flyweight.ErrMissing, typ: "HttpHeader", field: "name"},
		{name: "header without name", build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Value("v").Build()
			return err
		}, want: flyweight.ErrMissing, typ: "HttpHeader", field: "name"},
		{name: "header without value", build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Name("n").Build()
			return err
		}, want: flyweight.ErrMissing, typ: "HttpHeader", field: "value"},
		{name: "typeId missing", build: func(buf []byte) error {
			var b http.HttpBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).CompositeID(1).Build()
			return err
		}, want: flyweight.ErrMissing, typ: "HttpBeginEx", field: "typeId"},
		{name: "typeId missing before the array", build: func(buf []byte) error {
			var b http.HttpBeginExBuilder
			addHeaders(b.Wrap(buf, 0, len(buf)).Headers(), hdr{text("a"), text("b")})
			_, err := b.Build()
			return err
		}, want: flyweight.ErrMissing, typ: "HttpBeginEx", field: "typeId"},
		{name: "item without name", build: func(buf []byte) error {
			var b http.HttpEndExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(1).Trailers().Item().Value("v")
			_, err := b.Build()
			return err
		}, want: flyweight.ErrMissing, typ: "HttpHeader", field: "name"},
		{name: "item without value, then another item", build: func(buf []byte) error {
			var b http.HttpResetExBuilder
			h := b.Wrap(buf, 0, len(buf)).TypeID(1).Headers()
			h.Item().Name("n")
			h.Item().Name("m").Value("v")
			_, err := b.Build()
			return err
		}, want: flyweight.ErrMissing, typ: "HttpHeader", field: "value"},
		{name: "compositeId after typeId", build: func(buf []byte) error {
			var b http.HttpBeginExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).TypeID(1).CompositeID(2).Build()
			return err
		}, want: flyweight.ErrOrder, typ: "HttpBeginEx", field: "compositeId"},
		{name: "typeId twice", build: func(buf []byte) error {
			var b http.HttpChallengeExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).TypeID(1).TypeID(2).Build()
			return err
		}, want: flyweight.ErrOrder, typ: "HttpChallengeEx", field: "typeId"},
		{name: "array setter twice", build: func(buf []byte) error {
			var b http.HttpBeginExBuilder
			addHeaders(b.Wrap(buf, 0, len(buf)).TypeID(1).Headers(), hdr{text("a"), text("b")})
			addHeaders(b.Headers(), hdr{text("c"), text("d")})
			_, err := b.Build()
			return err
		}, want: flyweight.ErrOrder, typ: "HttpBeginEx", field: "headers"},
		{name: "promiseId after promise", build: func(buf []byte) error {
			var b http.HttpFlushExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(1).Promise()
			_, err := b.PromiseID(3).Build()
			return err
		}, want: flyweight.ErrOrder, typ: "HttpFlushEx", field: "promiseId"},
		{name: "header name after value", build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Name("a").Value("b").Name("c").Build()
			return err
		}, want: flyweight.ErrOrder, typ: "HttpHeader", field: "name"},
		{name: "name too long for string8", build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Name(strings.Repeat("n", 128)).Value("v").Build()
			return err
		}, want: flyweight.ErrRange, typ: "HttpHeader", field: "name"},
		{name: "name bytes too long for string8", build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			_, err := b.Wrap(buf, 0, len(buf)).NameBytes(make([]byte, 200)).Value("v").Build()
			return err
		}, want: flyweight.ErrRange, typ: "HttpHeader", field: "name"},
		{name: "item name too long for string8", build: func(buf []byte) error {
			var b http.HttpBeginExBuilder
			addHeaders(b.Wrap(buf, 0, len(buf)).TypeID(1).Headers(), hdr{text(strings.Repeat("n", 128)), text("v")})
			_, err := b.Build()
			return err
		}, want: flyweight.ErrRange, typ: "HttpHeader", field: "name"},
		{name: "value too long for string16", build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			_, err := b.Wrap(buf, 0, len(buf)).Name("n").Value(strings.Repeat("v", 1<<15)).Build()
			return err
		}, want: flyweight.ErrRange, typ: "HttpHeader", field: "value"},
		{name: "tiny buffer", build: func(buf []byte) error {
			var b http.HttpBeginExBuilder
			addHeaders(b.Wrap(buf, 0, 4).CompositeID(1).TypeID(2).Headers(), hdr{text("a"), text("b")})
			_, err := b.Build()
			return err
		}, want: flyweight.ErrOverflow, typ: "HttpBeginEx", field: "compositeId"},
		{name: "no room for an item", build: func(buf []byte) error {
			var b http.HttpBeginExBuilder
			addHeaders(b.Wrap(buf, 0, 22).CompositeID(1).TypeID(2).Headers(), hdr{text("a"), text("b")})
			_, err := b.Build()
			return err
		}, want: flyweight.ErrOverflow, typ: "HttpHeader", field: "value"},
		{name: "offset past maxLimit", build: func(buf []byte) error {
			var b http.HttpBeginExBuilder
			_, err := b.Wrap(buf, 8, 4).TypeID(1).Build()
			return err
		}, want: flyweight.ErrBounds, typ: "HttpBeginEx"},
		{name: "maxLimit past the buffer", build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			_, err := b.Wrap(buf, 0, len(buf)+1).Name("n").Value("v").Build()
			return err
		}, want: flyweight.ErrBounds, typ: "HttpHeader"},
		{name: "errors are sticky", build: func(buf []byte) error {
			var b http.HttpHeaderBuilder
			b.Wrap(buf, 0, len(buf)).Name(strings.Repeat("n", 128)).NameNull().Value("v")
			_, err := b.Build()
			return err
		}, want: flyweight.ErrRange, typ: "HttpHeader", field: "name"},
		{name: "Fail", build: func(buf []byte) error {
			var b http.HttpFlushExBuilder
			_, err := b.Wrap(buf, 0, len(buf)).TypeID(1).Fail(errCustom).PromiseID(2).Build()
			return err
		}, want: errCustom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.build(make([]byte, 1<<16+64))
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			if tc.typ == "" {
				return
			}
			var fe *flyweight.Error
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.typ, fe.Type)
			assert.Equal(t, tc.field, fe.Field)
			if tc.field != "" {
				assert.Contains(t, err.Error(), tc.typ+"."+tc.field)
			}
		})
	}
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
	buf := enc{}.i64(cid).i32(tid).i64(9).headers(push...)
	var v http.HttpFlushEx
	require.NoError(t, v.Wrap(buf, 0, len(buf)))
	v.SetCompositeID(-1)
	v.SetTypeID(-2)
	v.SetPromiseID(-3)
	var r http.HttpFlushEx
	require.NoError(t, r.Wrap(buf, 0, len(buf)))
	assert.Equal(t, []any{int64(-1), int32(-2), int64(-3), 1, push}, readFlushEx(&r))

	for _, tc := range []struct {
		name string
		set  func(buf []byte, off int) error
		read func(buf []byte, off int) (int64, int32, error)
	}{
		{name: "HttpBeginEx", set: func(buf []byte, off int) error {
			var v http.HttpBeginEx
			err := v.Wrap(buf, off, len(buf))
			if err == nil {
				v.SetCompositeID(cid)
				v.SetTypeID(tid)
			}
			return err
		}, read: func(buf []byte, off int) (int64, int32, error) {
			var v http.HttpBeginEx
			err := v.Wrap(buf, off, len(buf))
			return v.CompositeID(), v.TypeID(), err
		}},
		{name: "HttpEndEx", set: func(buf []byte, off int) error {
			var v http.HttpEndEx
			err := v.Wrap(buf, off, len(buf))
			if err == nil {
				v.SetCompositeID(cid)
				v.SetTypeID(tid)
			}
			return err
		}, read: func(buf []byte, off int) (int64, int32, error) {
			var v http.HttpEndEx
			err := v.Wrap(buf, off, len(buf))
			return v.CompositeID(), v.TypeID(), err
		}},
		{name: "HttpResetEx", set: func(buf []byte, off int) error {
			var v http.HttpResetEx
			err := v.Wrap(buf, off, len(buf))
			if err == nil {
				v.SetCompositeID(cid)
				v.SetTypeID(tid)
			}
			return err
		}, read: func(buf []byte, off int) (int64, int32, error) {
			var v http.HttpResetEx
			err := v.Wrap(buf, off, len(buf))
			return v.CompositeID(), v.TypeID(), err
		}},
		{name: "HttpChallengeEx", set: func(buf []byte, off int) error {
			var v http.HttpChallengeEx
			err := v.Wrap(buf, off, len(buf))
			if err == nil {
				v.SetCompositeID(cid)
				v.SetTypeID(tid)
			}
			return err
		}, read: func(buf []byte, off int) (int64, int32, error) {
			var v http.HttpChallengeEx
			err := v.Wrap(buf, off, len(buf))
			return v.CompositeID(), v.TypeID(), err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf := []byte(enc{}.add(1, 2, 3).i64(0).i32(0).headers(push...))
			require.NoError(t, tc.set(buf, 3))
			c, ty, err := tc.read(buf, 3)
			require.NoError(t, err)
			assert.Equal(t, cid, c)
			assert.Equal(t, tid, ty)
			assert.Equal(t, []byte{1, 2, 3}, buf[:3], "bytes before the value")
			assert.Equal(t, []byte(enc{}.headers(push...)), buf[15:], "the array")
		})
	}
}

// TestGettersAlias checks that string getters view the buffer without
// copying, and that appending to one cannot overwrite the next field.
func TestGettersAlias(t *testing.T) {
	buf := enc{}.header(hdr{text("ab"), text("cd")})
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
	buf := enc{}.i64(cid).i32(tid).headers(hs...)
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
