package http_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/http/h1"
)

func TestLimitsOptionsHead(t *testing.T) {
	defaults := h1.DefaultLimits()
	tests := []struct {
		name string
		in   http.LimitsOptions
		want h1.Limits
	}{
		{name: "none set", want: defaults},
		{
			name: "all set",
			in:   http.LimitsOptions{Target: 64, Headers: 8, HeaderBytes: 512, Body: new(int64(64))},
			want: h1.Limits{MaxTarget: 64, MaxHeaders: 8, MaxHeaderBytes: 512},
		},
		{
			name: "body is not a head limit",
			in:   http.LimitsOptions{Body: new(int64(1))},
			want: defaults,
		},
		{
			name: "headers only",
			in:   http.LimitsOptions{Headers: 3},
			want: h1.Limits{MaxTarget: defaults.MaxTarget, MaxHeaders: 3, MaxHeaderBytes: defaults.MaxHeaderBytes},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.in.Head())
		})
	}
}
