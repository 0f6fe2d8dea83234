package jwtguard

import (
	"io"
	"testing"

	engineconfig "github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/guard"
	"github.com/sluicehq/sluice/internal/schematest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zillaExample is the jwt guard of Zilla's documentation.
const zillaExample = `name: example
guards:
  jwt0:
    type: jwt
    options:
      issuer: https://auth.example.com
      audience: https://api.example.com
      roles: "realm_access.roles"
      attributes: {email: "recipient@email.address"}
      keys:
        - {kty: EC, crv: P-256, x: MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4, y: 4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM, use: enc, kid: "1"}
        - {kty: RSA, n: 0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw, e: AQAB, alg: RS256, kid: 2011-04-29}
      challenge: 30
`

func loadSchema(t *testing.T) *engineconfig.Schema {
	t.Helper()
	info, err := guard.Lookup(Type)
	require.NoError(t, err)
	s, err := engineconfig.NewSchema(engineconfig.Fragment{Kind: "guard", Type: Type, Options: info.Schema})
	require.NoError(t, err)
	return s
}

// TestZillaExample loads Zilla's example through the configuration schema
// and starts the guard it describes.
func TestZillaExample(t *testing.T) {
	cfg, err := engineconfig.Load("zilla.yaml", []byte(zillaExample), loadSchema(t))
	require.NoError(t, err)
	gc := cfg.Guard("jwt0")
	require.NotNil(t, gc)
	options, ok := gc.Options.Value().(map[string]any)
	require.True(t, ok)
	g, err := guard.New(gc.Type, gc.Name, options, nil)
	require.NoError(t, err)
	require.NoError(t, g.Close())
}

func TestSchemaRejects(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{
			name: "unknown option",
			src:  "      lifetime: PT5S\n",
			want: "lifetime",
		},
		{
			name: "keys not http",
			src:  "      keys: ftp://auth.example.com/jwks\n",
			want: "keys",
		},
		{
			name: "key without kid",
			src:  "      keys: [{kty: RSA}]\n",
			want: "keys",
		},
		{
			name: "challenge not an integer",
			src:  "      challenge: soon\n",
			want: "challenge",
		},
		{
			name: "bad attribute name",
			src:  "      attributes: {\"1x\": a}\n",
			want: "attributes",
		},
	}
	schema := loadSchema(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "name: example\nguards:\n  jwt0:\n    type: jwt\n    options:\n" +
				"      issuer: https://auth.example.com\n      audience: https://api.example.com\n" + tt.src
			_, err := engineconfig.Load("sluice.yaml", []byte(src), schema)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "sluice.yaml:")
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err := engineconfig.Load("sluice.yaml", []byte("name: example\nguards:\n  jwt0:\n    type: jwt\n    options:\n      issuer: https://auth.example.com\n"), schema)
	require.Error(t, err, "audience is required")
	assert.Contains(t, err.Error(), "audience")
}

// TestSchemaAgreesWithNew checks that the options schema and New agree on
// which options are valid.
func TestSchemaAgreesWithNew(t *testing.T) {
	rsaJWK := `{"kty": "RSA", "kid": "k", "alg": "RS256", "e": "AQAB", "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"}`
	base := `"issuer": "https://a", "audience": "b", `
	tests := []schematest.Case{
		{Name: "all", Options: `{` + base + `"roles": "realm_access.roles", "identity": "email", "attributes": {"tenant": "org.id"}, "challenge": 30, "keys": [` + rsaJWK + `]}`, Valid: true},
		{Name: "keys only", Options: `{` + base + `"keys": [` + rsaJWK + `]}`, Valid: true},
		{Name: "empty", Options: `{}`},
		{Name: "no audience", Options: `{"issuer": "https://a", "keys": [` + rsaJWK + `]}`},
		{Name: "no issuer", Options: `{"audience": "b", "keys": [` + rsaJWK + `]}`},
		{Name: "empty issuer", Options: `{"issuer": "", "audience": "b", "keys": [` + rsaJWK + `]}`},
		{Name: "unknown", Options: `{` + base + `"keys": [` + rsaJWK + `], "lifetime": "PT5S"}`},
		{Name: "empty keys", Options: `{` + base + `"keys": []}`},
		{Name: "keys number", Options: `{` + base + `"keys": 1}`},
		{Name: "keys file URL", Options: `{` + base + `"keys": "file:///jwks.json"}`},
		{Name: "negative challenge", Options: `{` + base + `"challenge": -1, "keys": [` + rsaJWK + `]}`},
		{Name: "fractional challenge", Options: `{` + base + `"challenge": 1.5, "keys": [` + rsaJWK + `]}`},
		{Name: "roles array", Options: `{` + base + `"roles": ["a"], "keys": [` + rsaJWK + `]}`},
		{Name: "attribute number", Options: `{` + base + `"attributes": {"a": 1}, "keys": [` + rsaJWK + `]}`},
	}
	info, err := guard.Lookup(Type)
	require.NoError(t, err)
	schematest.Agrees(t, info.Schema, tests, func(options map[string]any) (io.Closer, error) {
		return info.New("jwt0", options, nil)
	})
}
