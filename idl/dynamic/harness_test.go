package dynamic_test

// A differential harness: random values of every type are built twice —
// through the generated builders, driven by reflection in IDL order, and
// through the dynamic Builder's method chain in a shuffled order — and the
// bytes (or the failure) must agree. The bytes are then decoded by the
// generated reader and by Decode, matched by a Matcher given the same
// value, and round-tripped through Decode and Encode.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/idl"
	"github.com/sluicehq/sluice/idl/dynamic"
	"github.com/sluicehq/sluice/idl/flyweight"
	"github.com/sluicehq/sluice/internal/fixture"
)

// Schemas.

func builtin(t testing.TB) *dynamic.Schema {
	t.Helper()
	s, err := dynamic.Builtin()
	require.NoError(t, err)
	return s
}

var fixtureFiles = sync.OnceValues(func() ([]*idl.File, error) {
	return idl.ParseFiles(filepath.Join("..", "..", "codegen", "testdata", "fixture.idl"))
})

func fixtureSchema(t testing.TB) *dynamic.Schema {
	t.Helper()
	files, err := fixtureFiles()
	require.NoError(t, err)
	s, err := dynamic.NewSchema(files...)
	require.NoError(t, err)
	return s
}

// genType pairs a type of a schema with its generated builder and reader.
type genType struct {
	fixture bool
	name    string
	builder reflect.Type
	view    reflect.Type
}

func gt[B, V any](fixture bool, name string) genType {
	return genType{fixture: fixture, name: name, builder: reflect.TypeFor[B](), view: reflect.TypeFor[V]()}
}

var genTypes = []genType{
	gt[mcp.McpBeginExBuilder, mcp.McpBeginEx](false, "McpBeginEx"),
	gt[mcp.McpFlushExBuilder, mcp.McpFlushEx](false, "McpFlushEx"),
	gt[mcp.McpChallengeExBuilder, mcp.McpChallengeEx](false, "McpChallengeEx"),
	gt[mcp.McpResetExBuilder, mcp.McpResetEx](false, "McpResetEx"),
	gt[mcp.McpAbortExBuilder, mcp.McpAbortEx](false, "McpAbortEx"),
	gt[mcp.McpEndExBuilder, mcp.McpEndEx](false, "McpEndEx"),
	gt[mcp.McpEventExBuilder, mcp.McpEventEx](false, "McpEventEx"),
	gt[mcp.McpLifecycleBeginExBuilder, mcp.McpLifecycleBeginEx](false, "McpLifecycleBeginEx"),
	gt[mcp.McpProgressFlushExBuilder, mcp.McpProgressFlushEx](false, "McpProgressFlushEx"),
	gt[http.HttpHeaderBuilder, http.HttpHeader](false, "HttpHeader"),
	gt[http.HttpBeginExBuilder, http.HttpBeginEx](false, "HttpBeginEx"),
	gt[http.HttpFlushExBuilder, http.HttpFlushEx](false, "HttpFlushEx"),
	gt[http.HttpEndExBuilder, http.HttpEndEx](false, "HttpEndEx"),
	gt[http.HttpResetExBuilder, http.HttpResetEx](false, "HttpResetEx"),
	gt[http.HttpChallengeExBuilder, http.HttpChallengeEx](false, "HttpChallengeEx"),
	gt[frame.ExtensionBuilder, frame.Extension](false, "Extension"),
	gt[frame.FrameBuilder, frame.Frame](false, "Frame"),
	gt[frame.BeginBuilder, frame.Begin](false, "Begin"),
	gt[frame.DataBuilder, frame.Data](false, "Data"),
	gt[frame.EndBuilder, frame.End](false, "End"),
	gt[frame.AbortBuilder, frame.Abort](false, "Abort"),
	gt[frame.FlushBuilder, frame.Flush](false, "Flush"),
	gt[frame.ResetBuilder, frame.Reset](false, "Reset"),
	gt[frame.WindowBuilder, frame.Window](false, "Window"),
	gt[frame.SignalBuilder, frame.Signal](false, "Signal"),
	gt[frame.ChallengeBuilder, frame.Challenge](false, "Challenge"),
	gt[frame.RedirectBuilder, frame.Redirect](false, "Redirect"),
	gt[frame.EventBuilder, frame.Event](false, "Event"),
	gt[fixture.PrefixBuilder, fixture.Prefix](true, "Prefix"),
	gt[fixture.FixedBuilder, fixture.Fixed](true, "Fixed"),
	gt[fixture.VariableBuilder, fixture.Variable](true, "Variable"),
	gt[fixture.ChoiceBuilder, fixture.Choice](true, "Choice"),
	gt[fixture.ByColorBuilder, fixture.ByColor](true, "ByColor"),
	gt[fixture.EmptyBuilder, fixture.Empty](true, "Empty"),
	gt[fixture.HolderBuilder, fixture.Holder](true, "Holder"),
	gt[fixture.BagBuilder, fixture.Bag](true, "Bag"),
	gt[fixture.SparseBuilder, fixture.Sparse](true, "Sparse"),
	gt[fixture.BagHolderBuilder, fixture.BagHolder](true, "BagHolder"),
	gt[fixture.NetHeaderBuilder, fixture.NetHeader](true, "NetHeader"),
	gt[fixture.NetChoiceBuilder, fixture.NetChoice](true, "NetChoice"),
	gt[fixture.FixedAliasBuilder, fixture.FixedAlias](true, "FixedAlias"),
}

func (g genType) schema(t testing.TB) *dynamic.Schema {
	if g.fixture {
		return fixtureSchema(t)
	}
	return builtin(t)
}

// Test values: a tree the harness builds both ways.

type tval struct {
	t       idl.Type // *idl.Struct, *idl.Union or *idl.List
	fields  []tfield // fields given, in IDL order
	kase    *idl.Case
	caseVal any
}

type tfield struct {
	f *idl.Field
	v any // int64 | tstr | []any | *tval
}

type tstr struct {
	s    string
	null bool
}

func fieldsOf(t idl.Type) []*idl.Field {
	switch t := t.(type) {
	case *idl.Struct:
		return t.AllFields()
	case *idl.Union:
		return t.ParentFields()
	case *idl.List:
		return t.Fields
	}
	return nil
}

// computed reports the size fields, which neither builder lets callers set.
func computed(fields []*idl.Field, f *idl.Field) bool {
	for _, g := range fields {
		if g.SizeField == f {
			return true
		}
	}
	return false
}

func isComposite(t idl.Type) bool {
	switch t.(type) {
	case *idl.Struct, *idl.Union, *idl.List:
		return true
	}
	return false
}

type gen struct {
	rng *rand.Rand
	// skipRequired is the chance of leaving out a field without default,
	// to compare the builders' failures too.
	skipRequired float64
}

func (g *gen) chance(p float64) bool { return g.rng.Float64() < p }

// value makes a random value of a composite type; forCase picks the union
// case (or -1 for a random one).
func (g *gen) value(t idl.Type, forCase int) *tval {
	v := &tval{t: t}
	fields := fieldsOf(t)
	_, isList := t.(*idl.List)
	for _, f := range fields {
		if computed(fields, f) {
			continue
		}
		switch {
		case isList && f.Required:
			if g.chance(g.skipRequired) {
				continue
			}
		case isList:
			if g.chance(0.4) {
				continue
			}
		case f.Default != nil || f.Array || isComposite(f.Type.Resolved) || f.Unbounded():
			if g.chance(0.35) {
				continue
			}
		default:
			if g.chance(g.skipRequired) {
				continue
			}
		}
		v.fields = append(v.fields, tfield{f, g.field(f)})
	}
	if u, ok := t.(*idl.Union); ok {
		i := forCase
		if i < 0 {
			i = g.rng.IntN(len(u.Cases))
		}
		v.kase = u.Cases[i]
		v.caseVal = g.field(v.kase.Field)
	}
	return v
}

func (g *gen) field(f *idl.Field) any {
	if !f.Array {
		return g.item(f)
	}
	items := make([]any, g.rng.IntN(4))
	for i := range items {
		items[i] = g.item(f)
	}
	return items
}

var interesting = []int64{0, 1, -1, 2, 7, 64, 127, 128, 255, 256, 300, -128, 1000, 0x7fff, -0x8000, 0xffff,
	1<<23 - 1, -1 << 23, 1<<24 - 1, math.MaxInt32, math.MinInt32, math.MaxUint32, 1 << 40, math.MaxInt64, math.MinInt64}

func fits(k idl.PrimKind, v int64) bool {
	lo, hi, _ := k.Range()
	return v >= lo && v <= hi
}

func (g *gen) int(k idl.PrimKind) int64 {
	if k == idl.Uint64 && g.chance(0.1) {
		return -1 // math.MaxUint64
	}
	for {
		var v int64
		if g.chance(0.6) {
			v = interesting[g.rng.IntN(len(interesting))]
		} else {
			v = g.rng.Int64() >> g.rng.IntN(64)
			if g.chance(0.5) {
				v = -v
			}
		}
		if fits(k, v) {
			return v
		}
	}
}

func (g *gen) bytes(n int) string {
	b := make([]byte, n)
	for i := range b {
		if g.chance(0.8) {
			b[i] = byte('a' + g.rng.IntN(26))
		} else {
			b[i] = byte(g.rng.IntN(256))
		}
	}
	return string(b)
}

func (g *gen) item(f *idl.Field) any {
	switch t := f.Type.Resolved.(type) {
	case *idl.Struct, *idl.Union, *idl.List:
		return g.value(t, -1)
	case *idl.Enum:
		if g.chance(0.8) {
			return t.Values[g.rng.IntN(len(t.Values))].Value
		}
		return g.int(t.BaseKind())
	case *idl.Primitive:
		k := t.Kind
		switch {
		case k.IsInteger():
			return g.int(k)
		case k.IsString():
			if g.chance(0.1) {
				return tstr{null: true}
			}
			return tstr{s: g.bytes(g.rng.IntN(12))}
		case f.SizeLit > 0:
			return tstr{s: g.bytes(f.SizeLit)}
		case f.SizeField != nil:
			if f.Default != nil && f.Default.Kind == idl.NullValue && g.chance(0.2) {
				return tstr{null: true}
			}
			return tstr{s: g.bytes(g.rng.IntN(12))}
		default:
			return tstr{s: g.bytes(g.rng.IntN(12))}
		}
	}
	panic("unexpected type " + f.Type.Name)
}

// String renders a test value for failure messages.
func (v *tval) String() string {
	var b strings.Builder
	b.WriteString(v.t.TypeName() + "{")
	for i, f := range v.fields {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %v", f.f.Name, f.v)
	}
	if v.kase != nil {
		fmt.Fprintf(&b, " | %s: %v", v.kase.Field.Name, v.caseVal)
	}
	b.WriteString("}")
	return b.String()
}

// Driving the dynamic Builder and Matcher.

type caller interface {
	Call(method string, args ...any) (any, error)
}

type driver struct {
	rng *rand.Rand
}

// arg turns a value into a Call argument, varying the Go type.
func (d *driver) arg(f *idl.Field, v any) any {
	switch v := v.(type) {
	case int64:
		if e, ok := f.Type.Resolved.(*idl.Enum); ok && d.rng.IntN(2) == 0 {
			for _, ev := range e.Values {
				if ev.Value == v {
					return ev.Name
				}
			}
		}
		if f.Type.PrimKind() == idl.Uint64 && v < 0 {
			return uint64(v)
		}
		switch d.rng.IntN(3) {
		case 0:
			return int(v)
		case 1:
			if v >= math.MinInt32 && v <= math.MaxInt32 {
				return int32(v)
			}
		}
		return v
	case tstr:
		if v.null {
			return nil
		}
		if d.rng.IntN(2) == 0 {
			return []byte(v.s)
		}
		return v.s
	}
	panic(fmt.Sprintf("no argument for %T", v))
}

// singularOf returns the singular method of array field f of t, if the
// schema registers one: the name without "s" when no field or case has it.
func singularOf(t idl.Type, f *idl.Field) (string, bool) {
	s := strings.TrimSuffix(f.Name, "s")
	if s == f.Name || s == "" || s == "build" {
		return "", false
	}
	for _, g := range fieldsOf(t) {
		if g.Name == s {
			return "", false
		}
	}
	if u, ok := t.(*idl.Union); ok {
		for _, c := range u.Cases {
			if c.Field.Name == s {
				return "", false
			}
		}
	}
	// An earlier array field with the same singular takes it.
	for _, g := range fieldsOf(t) {
		if g == f {
			break
		}
		if g.Array && strings.TrimSuffix(g.Name, "s") == s {
			return "", false
		}
	}
	return s, true
}

// drive applies v to c in a shuffled order; it returns the first error.
func (d *driver) drive(c caller, v *tval) error {
	order := d.rng.Perm(len(v.fields))
	for _, i := range order {
		if err := d.set(c, v.t, v.fields[i].f, v.fields[i].v, ""); err != nil {
			return err
		}
	}
	if v.kase != nil {
		return d.set(c, v.t, v.kase.Field, v.caseVal, v.kase.Field.Name)
	}
	return nil
}

// set gives one field its value; caseName is set for a union case.
func (d *driver) set(c caller, t idl.Type, f *idl.Field, v any, caseName string) error {
	name := f.Name
	switch v := v.(type) {
	case *tval:
		child, err := c.Call(name)
		if err != nil {
			return err
		}
		return d.nested(c, child.(caller), v)
	case []any:
		composite := isComposite(f.Type.Resolved)
		if caseName != "" || !composite && (len(v) == 0 || d.rng.IntN(2) == 0) {
			// Select the case (or set the scalar array) in one call.
			args := []any{}
			if !composite {
				for _, item := range v {
					args = append(args, d.arg(f, item))
				}
			}
			if _, err := c.Call(name, args...); err != nil {
				return err
			}
			if !composite {
				return nil
			}
		}
		method := name
		if s, ok := singularOf(t, f); ok && d.rng.IntN(2) == 0 {
			method = s
		}
		for _, item := range v {
			if tv, ok := item.(*tval); ok {
				if args, ok := positional(tv); ok && d.rng.IntN(2) == 0 {
					if _, err := c.Call(method, args...); err != nil {
						return err
					}
					continue
				}
				if caseName != "" {
					s, ok := singularOf(t, f)
					if !ok {
						return fmt.Errorf("no way to append to case %s", caseName)
					}
					method = s
				}
				child, err := c.Call(method)
				if err != nil {
					return err
				}
				if err := d.nested(c, child.(caller), tv); err != nil {
					return err
				}
				continue
			}
			if _, err := c.Call(method, d.arg(f, item)); err != nil {
				return err
			}
		}
		return nil
	}
	_, err := c.Call(name, d.arg(f, v))
	return err
}

// positional returns an item's values as the arguments of header(name,
// value), when it sets exactly a leading run of scalar struct fields.
func positional(v *tval) ([]any, bool) {
	s, ok := v.t.(*idl.Struct)
	if !ok || len(v.fields) == 0 {
		return nil, false
	}
	all := s.AllFields()
	var args []any
	for i, f := range v.fields {
		if i >= len(all) || all[i] != f.f || f.f.Array || isComposite(f.f.Type.Resolved) || computed(all, f.f) {
			return nil, false
		}
		switch x := f.v.(type) {
		case tstr:
			if x.null {
				args = append(args, nil)
			} else {
				args = append(args, x.s)
			}
		default:
			args = append(args, x)
		}
	}
	return args, true
}

// nested drives a child builder or matcher and checks that its build()
// returns the parent.
func (d *driver) nested(parent, child caller, v *tval) error {
	if err := d.drive(child, v); err != nil {
		return err
	}
	back, err := child.Call("build")
	if err != nil {
		return err
	}
	if back != parent {
		return fmt.Errorf("build() of a nested builder returned %T %p, not its parent %p", back, back, parent)
	}
	return nil
}

func buildDynamic(s *dynamic.Schema, name string, v *tval, rng *rand.Rand) ([]byte, error) {
	b, err := s.NewBuilder(name)
	if err != nil {
		return nil, err
	}
	d := &driver{rng: rng}
	if err := d.drive(b, v); err != nil {
		return nil, err
	}
	out, err := b.Call("build")
	if err != nil {
		return nil, err
	}
	return out.([]byte), nil
}

func matcherFor(s *dynamic.Schema, name string, v *tval, rng *rand.Rand) (*dynamic.Matcher, error) {
	m, err := s.NewMatcher(name)
	if err != nil {
		return nil, err
	}
	d := &driver{rng: rng}
	if err := d.drive(m, v); err != nil {
		return nil, err
	}
	out, err := m.Call("build")
	if err != nil {
		return nil, err
	}
	return out.(*dynamic.Matcher), nil
}

// Driving the generated builders by reflection.

func method(v reflect.Value, name string) reflect.Value {
	t := v.Type()
	for i := range t.NumMethod() {
		if strings.EqualFold(t.Method(i).Name, name) {
			return v.Method(i)
		}
	}
	panic(fmt.Sprintf("%s has no method %s", t, name))
}

func callGen(m reflect.Value, args ...any) []reflect.Value {
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		in[i] = reflect.ValueOf(a)
		if pt := m.Type().In(i); in[i].Type() != pt {
			in[i] = in[i].Convert(pt)
		}
	}
	return m.Call(in)
}

func genDrive(b reflect.Value, v *tval) {
	for _, f := range v.fields {
		genSet(b, f.f, f.v)
	}
	if v.kase != nil {
		genSet(b, v.kase.Field, v.caseVal)
	}
}

func genSet(b reflect.Value, f *idl.Field, v any) {
	m := method(b, f.Name)
	switch v := v.(type) {
	case *tval:
		genDrive(callGen(m)[0], v)
	case []any:
		ab := callGen(m)[0]
		for _, item := range v {
			ib := callGen(ab.MethodByName("Item"))[0]
			switch x := item.(type) {
			case *tval:
				genDrive(ib, x)
			case tstr:
				if x.null {
					callGen(ib.MethodByName("SetNull"))
				} else {
					callGen(ib.MethodByName("Set"), x.s)
				}
			default:
				callGen(ib.MethodByName("Set"), x)
			}
		}
	case tstr:
		switch {
		case v.null:
			callGen(method(b, f.Name+"Null"))
		case f.Type.PrimKind() == idl.Octets:
			callGen(m, []byte(v.s))
		default:
			callGen(m, v.s)
		}
	default:
		callGen(m, v)
	}
}

func buildGenerated(g genType, v *tval) ([]byte, error) {
	buf := make([]byte, 1<<16)
	b := reflect.New(g.builder)
	callGen(b.MethodByName("Wrap"), buf, 0, len(buf))
	genDrive(b, v)
	out := callGen(b.MethodByName("BuildLimit"))
	if err, _ := out[1].Interface().(error); err != nil {
		return nil, err
	}
	return buf[:out[0].Interface().(int)], nil
}

// readGenerated wraps b with the generated reader and returns its limit.
func readGenerated(g genType, b []byte) (int, bool) {
	v := reflect.New(g.view)
	if !callGen(v.MethodByName("TryWrap"), b, 0, len(b))[0].Bool() {
		return 0, false
	}
	return int(callGen(v.MethodByName("Limit"))[0].Int()), true
}

// The harness.

func TestDifferential(t *testing.T) {
	const rounds = 150
	for _, g := range genTypes {
		t.Run(g.name, func(t *testing.T) {
			s := g.schema(t)
			typ, ok := s.Lookup(g.name)
			require.True(t, ok)
			cases := []int{-1}
			if u, ok := typ.(*idl.Union); ok {
				cases = nil
				for i := range u.Cases {
					cases = append(cases, i)
				}
			}
			seed := uint64(len(g.name)) * 0x9e3779b97f4a7c15
			rng := rand.New(rand.NewPCG(seed, 42))
			built, failed := 0, 0
			for _, c := range cases {
				for i := range rounds {
					gn := &gen{rng: rng}
					if i%10 == 9 {
						gn.skipRequired = 0.1
					}
					v := gn.value(typ, c)
					want, wantErr := buildGenerated(g, v)
					got, gotErr := buildDynamic(s, g.name, v, rng)
					if wantErr != nil || gotErr != nil {
						require.Falsef(t, wantErr == nil || gotErr == nil,
							"only one builder failed for %s:\ngenerated: %v\ndynamic: %v", v, wantErr, gotErr)
						failed++
						sameFailure(t, v, wantErr, gotErr)
						continue
					}
					built++
					require.Equalf(t, want, got, "value %s", v)
					checkDecoded(t, s, g, v, got, rng)
				}
			}
			t.Logf("%d values built, %d failed in both", built, failed)
			require.Positive(t, built)
		})
	}
}

// sameFailure checks that both builders failed at the same field for the
// same reason.
func sameFailure(t *testing.T, v *tval, want, got error) {
	t.Helper()
	var fe *flyweight.Error
	require.ErrorAs(t, want, &fe)
	var de *dynamic.Error
	require.ErrorAs(t, got, &de)
	require.Truef(t, strings.HasSuffix(de.Path, "."+fe.Field) || strings.Contains(de.Msg, fe.Type+"."+fe.Field),
		"value %s\ngenerated: %v\ndynamic: %v", v, want, got)
	kinds := map[error]error{flyweight.ErrMissing: dynamic.ErrMissing, flyweight.ErrRange: dynamic.ErrRange}
	require.ErrorIsf(t, got, kinds[fe.Err], "value %s\ngenerated: %v\ndynamic: %v", v, want, got)
}

func checkDecoded(t *testing.T, s *dynamic.Schema, g genType, v *tval, b []byte, rng *rand.Rand) {
	t.Helper()
	limit, ok := readGenerated(g, b)
	require.True(t, ok)
	require.Equal(t, len(b), limit)

	m, err := matcherFor(s, g.name, v, rng)
	require.NoError(t, err)
	require.NoErrorf(t, m.Match(b), "value %s\nformat %s", v, s.Format(g.name, b))

	dec, err := s.Decode(g.name, b)
	require.NoError(t, err)
	again, err := s.Encode(g.name, dec)
	require.NoError(t, err)
	require.Equal(t, b, again, "Encode(Decode(b))")

	f := s.Format(g.name, b)
	require.Truef(t, strings.HasPrefix(f, typeNameOf(s, g.name)+"{"), "Format: %s", f)
	require.False(t, slices.Contains([]string{"?"}, f))
}

func typeNameOf(s *dynamic.Schema, name string) string {
	t, _ := s.Lookup(name)
	return t.TypeName()
}
