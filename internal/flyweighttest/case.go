package flyweighttest

import "reflect"

// Reader is the API every generated view has.
type Reader[V any] interface {
	*V
	Wrap(buf []byte, off, limit int) error
	TryWrap(buf []byte, off, limit int) bool
	Offset() int
	Limit() int
	Sizeof() int
	Buffer() []byte
}

// Builder is the API every generated builder has.
type Builder[B, V any] interface {
	*B
	Wrap(buf []byte, off, maxLimit int) *B
	Build() (V, error)
	BuildLimit() (int, error)
	Limit() int
}

// ExtBuilder is the API of a builder of a type that extends
// core::stream::Extension.
type ExtBuilder[B, V any] interface {
	Builder[B, V]
	CompositeID(int64) *B
	TypeID(int32) *B
}

// WrapAs wraps a fresh V over all of buf.
func WrapAs[V any, PV Reader[V]](buf []byte) error {
	var v V
	return PV(&v).Wrap(buf, 0, len(buf))
}

// Span is what a reader says about where its value lies.
type Span struct {
	Off, Limit, Size int
	SameBuf          bool // Buffer() is the wrapped slice
	Try              bool // TryWrap's answer
}

// Case is one scenario of one generated type, erased of its types.
type Case struct {
	Name string
	Type string // the Go type name, as reported in *flyweight.Error
	Body Enc    // the expected encoding
	Want []any  // the expected getter values
	// Build runs the scenario's setters at buf[off:maxLimit], then Build,
	// and reads the returned view.
	Build func(buf []byte, off, maxLimit int) (limit int, got []any, err error)
	// BuildLimit runs the setters, then BuildLimit; builderLimit is the
	// builder's Limit() afterwards.
	BuildLimit func(buf []byte, off, maxLimit int) (limit, builderLimit int, err error)
	// Wrap wraps a fresh reader over buf[off:limit] and reads it.
	Wrap func(buf []byte, off, limit int) (Span, []any, error)
}

// Type makes the scenarios of one generated type: B and V are its builder
// and view, Read returns all getter values of a view in IDL order.
type Type[B any, PB Builder[B, V], V any, PV Reader[V]] struct {
	Read func(*V) []any
}

func typeName[V any]() string { return reflect.TypeFor[V]().Name() }

// Scenario is the case named "V/name": set runs the setters on a freshly
// wrapped builder (nil for none), body is the encoding they must write and
// want the getter values that encoding must read back as.
func (st Type[B, PB, V, PV]) Scenario(name string, set func(*B), body Enc, want ...any) Case {
	typ := typeName[V]()
	start := func(buf []byte, off, maxLimit int) PB {
		var b B
		PB(&b).Wrap(buf, off, maxLimit)
		if set != nil {
			set(&b)
		}
		return &b
	}
	return Case{
		Name: typ + "/" + name,
		Type: typ,
		Body: body,
		Want: want,
		Build: func(buf []byte, off, maxLimit int) (int, []any, error) {
			v, err := start(buf, off, maxLimit).Build()
			if err != nil {
				return 0, nil, err
			}
			return PV(&v).Limit(), st.Read(&v), nil
		},
		BuildLimit: func(buf []byte, off, maxLimit int) (int, int, error) {
			b := start(buf, off, maxLimit)
			limit, err := b.BuildLimit()
			return limit, b.Limit(), err
		},
		Wrap: func(buf []byte, off, limit int) (Span, []any, error) {
			var probe V
			sp := Span{Try: PV(&probe).TryWrap(buf, off, limit)}
			var v V
			if err := PV(&v).Wrap(buf, off, limit); err != nil {
				return sp, nil, err
			}
			b := PV(&v).Buffer()
			sp.Off, sp.Limit, sp.Size = PV(&v).Offset(), PV(&v).Limit(), PV(&v).Sizeof()
			sp.SameBuf = len(b) == len(buf) && (len(b) == 0 || &b[0] == &buf[0])
			return sp, st.Read(&v), nil
		},
	}
}
