package dynamic_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/idl"
	"github.com/sluicehq/sluice/idl/dynamic"
)

// fuzzTarget is one type the fuzzer decodes as.
type fuzzTarget struct {
	schema *dynamic.Schema
	name   string
	gen    *genType // the generated reader, when there is one
}

// FuzzMatch decodes arbitrary bytes as a type of the builtin or fixture
// schema, named by the first argument (an unknown name picks a type by its
// length). Decode, Format and Match must never panic; Decode must accept
// exactly what the generated reader accepts (with no trailing bytes); and
// what decodes must encode again to bytes that decode to the same value.
func FuzzMatch(f *testing.F) {
	var targets []fuzzTarget
	byName := map[string]int{}
	for _, s := range []*dynamic.Schema{builtin(f), fixtureSchema(f)} {
		for _, name := range s.Types() {
			byName[name] = len(targets)
			targets = append(targets, fuzzTarget{schema: s, name: name})
		}
	}
	for i := range genTypes {
		g := &genTypes[i]
		s := g.schema(f)
		typ, _ := s.Lookup(g.name)
		for j, tg := range targets {
			if tg.schema == s {
				if t2, _ := s.Lookup(tg.name); t2 == typ {
					targets[j].gen = g
				}
			}
		}
		// Seeds: valid values of each type, built as the harness does.
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		for range 3 {
			v := (&gen{rng: rng}).value(typ, -1)
			if b, err := buildDynamic(s, g.name, v, rng); err == nil {
				f.Add(g.name, b)
			}
		}
	}

	f.Fuzz(func(t *testing.T, name string, b []byte) {
		i, ok := byName[name]
		if !ok {
			for j, tg := range targets {
				if strings.HasSuffix(tg.name, "::"+name) {
					i, ok = j, true
					break
				}
			}
		}
		if !ok {
			i = len(name) % len(targets)
		}
		tg := targets[i]
		s := tg.schema

		dec, err := s.Decode(tg.name, b)
		formatted := s.Format(tg.name, b)
		if err != nil {
			var de *dynamic.Error
			if !errors.As(err, &de) || !errors.Is(err, dynamic.ErrMalformed) {
				t.Fatalf("Decode error %v is not a malformed *dynamic.Error", err)
			}
		}
		if tg.gen != nil {
			limit, ok := readGenerated(*tg.gen, b)
			if (err == nil) != (ok && limit == len(b)) {
				t.Fatalf("Decode: %v; generated reader: ok %v limit %d of %d", err, ok, limit, len(b))
			}
		}

		// Matchers: an empty one, and one that checks the first field or
		// case, must not panic, and agree with Decode on malformed bytes.
		m, merr := s.NewMatcher(tg.name)
		if merr != nil {
			t.Fatal(merr)
		}
		if err2 := m.Match(b); (err2 == nil) != (err == nil) {
			t.Fatalf("empty matcher: %v, Decode: %v", err2, err)
		}
		typ, _ := s.Lookup(tg.name)
		switch typ := typ.(type) {
		case *idl.Union:
			_, _ = m.Call(typ.Cases[0].Field.Name)
		default:
			for _, fl := range fieldsOf(typ) {
				if !fl.Array && !isComposite(fl.Type.Resolved) {
					if _, cerr := m.Call(fl.Name, 0); cerr == nil {
						break
					}
				}
			}
		}
		_ = m.Match(b)
		r, _ := s.NewMatcher(tg.name)
		for _, fl := range fieldsOf(typ) {
			if k := fl.Type.PrimKind(); k.IsString() || k == idl.Octets {
				_, _ = r.Call(fl.Name+"Regex", "[a-z]*")
			}
		}
		_ = r.Match(b)
		_ = r.String()

		if err != nil {
			return
		}
		again, err := s.Encode(tg.name, dec)
		if err != nil {
			t.Fatalf("Encode(Decode(b)): %v\n%s", err, formatted)
		}
		if f2 := s.Format(tg.name, again); f2 != formatted {
			t.Fatalf("round trip changed the value:\n%s\n%s", formatted, f2)
		}
		if bytes.Equal(again, b) {
			return
		}
		// Only a non-minimal varint may encode differently.
		if _, err := s.Decode(tg.name, again); err != nil {
			t.Fatalf("re-encoded bytes do not decode: %v", err)
		}
	})
}
