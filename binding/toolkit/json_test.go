package toolkit_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicehq/sluice/binding/toolkit"
)

func TestAppendNumber(t *testing.T) {
	tenth, fifth := 0.1, 0.2 // variables: constants would add exactly
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{math.Copysign(0, -1), "0"},
		{5, "5"},
		{-3, "-3"},
		{tenth + fifth, "0.30000000000000004"},
		{1e6, "1000000"},
		{123456789012345680000, "123456789012345680000"},
		{1e21, "1e+21"},
		{1.5e-8, "1.5e-8"},
		{1e-7, "0.0000001"},
		{-2.5e300, "-2.5e+300"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, string(toolkit.AppendNumber(nil, tt.in)))
		})
	}
}

func TestAppendPercentDecoded(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"hello%20world", "hello world", true},
		{"%2F%2f", "//", true},
		{"plain", "plain", true},
		{"bad%2", "bad", false},
		{"bad%zz", "bad", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := toolkit.AppendPercentDecoded(nil, []byte(tt.in))
			assert.Equal(t, tt.ok, ok)
			if ok {
				assert.Equal(t, tt.want, string(got))
			}
		})
	}
}
