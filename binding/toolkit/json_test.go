package toolkit_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicehq/sluice/binding/toolkit"
)

func TestAppendString(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello", `"hello"`},
		{"quotes and backslash", `a"b\c`, `"a\"b\\c"`},
		{"controls", "\n\r\t\x00\x1f", `"\n\r\t\u0000\u001f"`},
		{"utf8", "é✓😀", `"é✓😀"`},
		{"invalid utf8", "a\xffb\xc3", `"a\ufffdb\ufffd"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toolkit.AppendString(nil, []byte(tt.in))
			assert.Equal(t, tt.want, string(got))
			assert.True(t, json.Valid(got))
		})
	}
}

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

func TestScanner(t *testing.T) {
	tests := []struct {
		name   string
		pieces []string
		want   []int // feed's answer per piece
	}{
		{"one piece", []string{`{"a":1}`}, []int{7}},
		{"trailing bytes", []string{`{"a":1}  `}, []int{7}},
		{"leading space", []string{"  {}"}, []int{4}},
		{"split", []string{`{"a":`, `[1,{"b":2}]`, `}x`}, []int{-1, -1, 1}},
		{"braces in strings", []string{`{"a":"}]{\"}"`, `}`}, []int{-1, 1}},
		{"escape across pieces", []string{`{"a":"\`, `"}`, `"}`}, []int{-1, -1, 2}},
		{"array", []string{`[1,2]`}, []int{5}},
		{"scalar", []string{`"x"`, `}`}, []int{-1, -1}},
		{"after done", []string{`{}`, `{}`}, []int{2, -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s toolkit.Scanner
			for i, p := range tt.pieces {
				assert.Equal(t, tt.want[i], s.Feed([]byte(p)), "piece %d %q", i, p)
			}
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
