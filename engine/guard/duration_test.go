package guard_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/sluicehq/sluice/engine/guard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want time.Duration
	}{
		{name: "seconds", in: "PT5S", want: 5 * time.Second},
		{name: "zero", in: "PT0S", want: 0},
		{name: "minutes", in: "PT15M", want: 15 * time.Minute},
		{name: "hours", in: "PT2H", want: 2 * time.Hour},
		{name: "days", in: "P2D", want: 48 * time.Hour},
		{name: "all", in: "P1DT2H3M4S", want: 26*time.Hour + 3*time.Minute + 4*time.Second},
		{name: "skip components", in: "P1DT4S", want: 24*time.Hour + 4*time.Second},
		{name: "fraction", in: "PT0.5S", want: 500 * time.Millisecond},
		{name: "comma fraction", in: "PT1,25S", want: 1250 * time.Millisecond},
		{name: "nanoseconds", in: "PT0.000000001S", want: time.Nanosecond},
		{name: "empty fraction", in: "PT1.S", want: time.Second},
		{name: "lower case", in: "pt1m30s", want: 90 * time.Second},
		{name: "big seconds", in: "PT3600S", want: time.Hour},
		{name: "max", in: "PT9223372036.854775807S", want: math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := guard.ParseDuration(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseDurationErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{name: "empty", in: ""},
		{name: "P alone", in: "P"},
		{name: "PT alone", in: "PT"},
		{name: "trailing T", in: "P1DT"},
		{name: "go syntax", in: "5s"},
		{name: "no P", in: "T5S"},
		{name: "no T", in: "P5S"},
		{name: "days after T", in: "PT1D"},
		{name: "years", in: "P1Y"},
		{name: "weeks", in: "P1W"},
		{name: "out of order", in: "PT1S1M"},
		{name: "repeated", in: "PT1S1S"},
		{name: "two T", in: "PT1HT1M"},
		{name: "no number", in: "PTS"},
		{name: "no unit", in: "PT5"},
		{name: "negative", in: "PT-5S"},
		{name: "sign", in: "-PT5S"},
		{name: "fraction on minutes", in: "PT1.5M"},
		{name: "long fraction", in: "PT0.0000000001S"},
		{name: "overflow", in: "PT9223372037S"},
		{name: "overflow sum", in: "PT2562047H48M"},
		{name: "overflow days", in: "P106752D"},
		{name: "huge number", in: "PT99999999999999999999S"},
		{name: "space", in: "PT5S "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := guard.ParseDuration(tt.in)
			require.ErrorIs(t, err, guard.ErrInvalidDuration)
			assert.EqualError(t, err, `guard: invalid duration "`+tt.in+`"`)
		})
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"PT5S", "P1DT2H3M4.5S", "PT", "P", "pt1,5s", "PT9223372036.854775807S"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := guard.ParseDuration(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %v, negative", s, d)
		}
		canonical := fmt.Sprintf("PT%d.%09dS", d/time.Second, d%time.Second)
		again, err := guard.ParseDuration(canonical)
		if err != nil || again != d {
			t.Fatalf("ParseDuration(%q) = %v; its canonical form %q gives %v, %v", s, d, canonical, again, err)
		}
	})
}

// TestPositiveDuration: both forms a binding's duration option takes,
// and nothing that is not positive.
func TestPositiveDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"PT15S", 15 * time.Second, true},
		{"pt1m30s", 90 * time.Second, true},
		{"90s", 90 * time.Second, true},
		{"1h2m", time.Hour + 2*time.Minute, true},
		{"PT0S", 0, false},
		{"0s", 0, false},
		{"-5s", 0, false},
		{"P", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	} {
		d, err := guard.PositiveDuration(tc.in)
		if !tc.ok {
			assert.ErrorIs(t, err, guard.ErrNotPositive, tc.in)
			continue
		}
		assert.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, d, tc.in)
	}
}
