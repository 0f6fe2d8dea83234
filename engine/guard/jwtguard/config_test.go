package jwtguard

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/sluicehq/sluice/engine/guard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewErrors(t *testing.T) {
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	smallJWK := signer{kid: "small", alg: jose.RS256, key: small}.jwk(t, false)
	ec := signerOf(t, "ec")
	ecWrongAlg := ec.jwk(t, false)
	ecWrongAlg["alg"] = "RS256"
	ecNoAlgHS := ec.jwk(t, false)
	ecNoAlgHS["alg"] = "HS256"
	encOnly := ec.jwk(t, false)
	encOnly["use"] = "enc"

	tests := []struct {
		name    string
		options map[string]any
		is      error
		want    string
	}{
		{name: "no options", options: nil, is: guard.ErrInvalidOption, want: "issuer: required"},
		{name: "missing audience", options: testOptions(t, map[string]any{"audience": nil}), is: guard.ErrInvalidOption, want: "audience: required"},
		{name: "missing issuer", options: testOptions(t, map[string]any{"issuer": nil}), is: guard.ErrInvalidOption, want: "issuer: required"},
		{name: "empty audience", options: testOptions(t, map[string]any{"audience": ""}), is: guard.ErrInvalidOption, want: "audience: must not be empty"},
		{name: "issuer not a string", options: testOptions(t, map[string]any{"issuer": 1}), is: guard.ErrInvalidOption, want: "issuer: want string, got int"},
		{name: "unknown option", options: testOptions(t, map[string]any{"lifetime": "PT5S"}), is: guard.ErrUnknownOption, want: `"lifetime"`},
		{name: "negative challenge", options: testOptions(t, map[string]any{"challenge": -1}), is: guard.ErrInvalidOption, want: "challenge"},
		{name: "fractional challenge", options: testOptions(t, map[string]any{"challenge": 1.5}), is: guard.ErrInvalidOption, want: "challenge"},
		{name: "bad attribute name", options: testOptions(t, map[string]any{"attributes": map[string]any{"1x": "a"}}), is: guard.ErrInvalidOption, want: `bad name "1x"`},
		{name: "attribute not a string", options: testOptions(t, map[string]any{"attributes": map[string]any{"a": 1}}), is: guard.ErrInvalidOption, want: "attributes.a"},
		{name: "keys empty", options: testOptions(t, map[string]any{"keys": []any{}}), is: guard.ErrInvalidOption, want: "keys: must not be empty"},
		{name: "keys a number", options: testOptions(t, map[string]any{"keys": 3}), is: guard.ErrInvalidOption, want: "keys"},
		{name: "keys URL not http", options: testOptions(t, map[string]any{"keys": "file:///etc/jwks.json"}), is: guard.ErrInvalidOption, want: "keys"},
		{name: "issuer no URL without keys", options: testOptions(t, map[string]any{"issuer": "acme", "keys": nil}), is: guard.ErrInvalidOption, want: "issuer"},
		{name: "key not an object", options: testOptions(t, map[string]any{"keys": []any{"k"}}), is: guard.ErrInvalidOption, want: "keys[0]"},
		{name: "key without kid", options: testOptions(t, map[string]any{"keys": []any{map[string]any{"kty": "RSA", "n": "AQAB", "e": "AQAB"}}}), is: guard.ErrInvalidOption, want: "keys[0]"},
		{name: "key bad kty", options: testOptions(t, map[string]any{"keys": []any{map[string]any{"kty": "XYZ", "kid": "1"}}}), is: guard.ErrInvalidOption, want: "keys[0]"},
		{name: "key bad base64", options: testOptions(t, map[string]any{"keys": []any{map[string]any{"kty": "EC", "kid": "1", "crv": "P-256", "x": "!", "y": "!"}}}), is: guard.ErrInvalidOption, want: "keys[0]"},
		{name: "symmetric key", options: testOptions(t, map[string]any{"keys": []any{map[string]any{"kty": "oct", "kid": "1", "k": "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"}}}), is: guard.ErrInvalidOption, want: "symmetric"},
		{name: "small RSA key", options: testOptions(t, map[string]any{"keys": []any{smallJWK}}), is: guard.ErrInvalidOption, want: "1024 bits"},
		{name: "alg not for the key", options: testOptions(t, map[string]any{"keys": []any{ecWrongAlg}}), is: guard.ErrInvalidOption, want: `alg "RS256"`},
		{name: "HMAC alg", options: testOptions(t, map[string]any{"keys": []any{ecNoAlgHS}}), is: guard.ErrInvalidOption, want: `alg "HS256"`},
		{name: "kid twice", options: testOptions(t, map[string]any{"keys": []any{ec.jwk(t, false), ec.jwk(t, true)}}), is: guard.ErrInvalidOption, want: `kid "ec1" given twice`},
		{name: "only enc keys", options: testOptions(t, map[string]any{"keys": []any{encOnly}}), is: ErrNoKeys},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := guard.New(Type, "jwt0", tt.options, nil)
			require.Error(t, err)
			assert.Nil(t, g)
			assert.ErrorIs(t, err, tt.is)
			assert.Contains(t, err.Error(), `guard/jwt "jwt0": `, "the error names the guard")
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParseDefaults(t *testing.T) {
	c, err := parse(map[string]any{"issuer": "https://a.example.com/realms/x", "audience": "api"})
	require.NoError(t, err)
	assert.Equal(t, config{
		issuer:   "https://a.example.com/realms/x",
		audience: "api",
		roles:    "scope",
		identity: "sub",
		keysURL:  "https://a.example.com/realms/x/.well-known/jwks.json",
	}, c)

	c, err = parse(map[string]any{"issuer": "https://a.example.com/", "audience": "api", "challenge": json.Number("30")})
	require.NoError(t, err)
	assert.Equal(t, "https://a.example.com/.well-known/jwks.json", c.keysURL)
	assert.EqualValues(t, 30_000, c.challenge)
}

// TestZillaExampleKeys loads the keys of Zilla's documentation example:
// the EC key is for encryption and stays out of the set.
func TestZillaExampleKeys(t *testing.T) {
	var keys []any
	require.NoError(t, json.Unmarshal([]byte(zillaKeys), &keys))
	set, err := configKeys(keys)
	require.NoError(t, err)
	require.Len(t, set.byKid, 1)
	k := set.byKid["2011-04-29"]
	require.NotNil(t, k)
	assert.Equal(t, jose.RS256, k.alg)
	assert.True(t, k.allows(jose.RS256))
	assert.False(t, k.allows(jose.PS256))
}

const zillaKeys = `[
  {"kty": "EC", "crv": "P-256", "x": "MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4", "y": "4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM", "use": "enc", "kid": "1"},
  {"kty": "RSA", "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw", "e": "AQAB", "alg": "RS256", "kid": "2011-04-29"}
]`
