package http_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/http/h1"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
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

// TestTimeout: an empty value keeps the default, a duration in either form
// replaces it, and anything else is an error naming the binding and the
// option, with the default kept.
func TestTimeout(t *testing.T) {
	cfg := &engine.BindingConfig{Name: "http0", Kind: "client", Config: &config.Binding{}}
	d := 90 * time.Second
	require.NoError(t, http.Timeout(cfg, "idle-timeout", "", &d))
	assert.Equal(t, 90*time.Second, d)
	require.NoError(t, http.Timeout(cfg, "idle-timeout", "PT5S", &d))
	assert.Equal(t, 5*time.Second, d)
	require.NoError(t, http.Timeout(cfg, "idle-timeout", "250ms", &d))
	assert.Equal(t, 250*time.Millisecond, d)
	err := http.Timeout(cfg, "idle-timeout", "PT0S", &d)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `http client http0: idle-timeout "PT0S": want a positive duration`)
	assert.Equal(t, 250*time.Millisecond, d)
}

// TestAuthorizationPatterns: each place splits around {credentials};
// header names are lower-cased, query and cookie names kept as written.
func TestAuthorizationPatterns(t *testing.T) {
	var a http.AuthorizationOptions
	a.Credentials.Headers = map[string]string{"Authorization": "Bearer {credentials}"}
	a.Credentials.Query = map[string]string{"access_token": "{credentials}"}
	a.Credentials.Cookies = map[string]string{"Session": "v1.{credentials}.end"}
	headers, query, cookies := a.Patterns()
	assert.Equal(t, []http.CredentialPattern{{Name: "authorization", Prefix: "Bearer "}}, headers)
	assert.Equal(t, []http.CredentialPattern{{Name: "access_token"}}, query)
	assert.Equal(t, []http.CredentialPattern{{Name: "Session", Prefix: "v1.", Suffix: ".end"}}, cookies)
	assert.Equal(t, "x=v1.abc.end", string(cookies[0].AppendValue([]byte("x="), "abc")))

	var none http.AuthorizationOptions
	headers, query, cookies = none.Patterns()
	assert.Empty(t, headers)
	assert.Empty(t, query)
	assert.Empty(t, cookies)
}
