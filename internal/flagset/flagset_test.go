package flagset_test

import (
	"testing"

	"github.com/sluicehq/sluice/internal/flagset"
)

type flag uint8

const (
	a flag = 1 << iota
	b
	c
)

func TestSet(t *testing.T) {
	var s flagset.Set[flag]
	if s.Has(a) || s.Has(a|b) {
		t.Fatal("the zero set has a flag")
	}
	s.Set(a | c)
	for _, tc := range []struct {
		v    flag
		want bool
	}{{a, true}, {b, false}, {c, true}, {a | c, true}, {a | b, false}, {0, true}} {
		if got := s.Has(tc.v); got != tc.want {
			t.Errorf("Has(%03b) of {a, c} = %v, want %v", tc.v, got, tc.want)
		}
	}
	s.Unset(a | b)
	if s.Has(a) || !s.Has(c) {
		t.Fatalf("after Unset(a|b): Has(a) = %v, Has(c) = %v, want false, true", s.Has(a), s.Has(c))
	}
	if o := flagset.Of(b | c); !o.Has(b|c) || o.Has(a) {
		t.Fatal("Of(b|c) does not hold exactly b and c")
	}
}
