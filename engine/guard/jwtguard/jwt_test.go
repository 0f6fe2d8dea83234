package jwtguard

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/sluicehq/sluice/engine/guard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReauthorize(t *testing.T) {
	rsaS, ecS, edS := signerOf(t, "rsa"), signerOf(t, "ec"), signerOf(t, "ed")
	valid := rsaS.sign(t, testClaims(nil))
	parts := strings.Split(valid, ".")
	require.Len(t, parts, 3)

	// The classic alg confusion: HS256 keyed with the bytes of the RSA
	// public key that verifies RS256.
	der, err := x509.MarshalPKIXPublicKey(rsaS.key.Public())
	require.NoError(t, err)
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	hsInput := b64(`{"alg":"HS256","kid":"rsa1","typ":"JWT"}`) + "." + parts[1]
	mac := hmac.New(sha256.New, pemKey)
	mac.Write([]byte(hsInput))
	hs256 := hsInput + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))

	tamperedPayload := parts[0] + "." + b64(`{"iss":"`+testIssuer+`","aud":"`+testAudience+`","sub":"mallory"}`) + "." + parts[2]
	sig := []byte(parts[2])
	sig[len(sig)/2] ^= 1
	tamperedSig := parts[0] + "." + parts[1] + "." + string(sig)

	tests := []struct {
		name       string
		token      string
		ok         bool  // authorized; the fields below apply
		why        error // for some refusals, the reason verify gives
		identity   string
		roles      []string // each must verify
		notRoles   []string // must not verify
		attributes map[string]string
		expiresAt  int64
	}{
		{
			name:       "RS256 with scope roles",
			token:      valid,
			ok:         true,
			identity:   "alice",
			roles:      []string{"read", "write"},
			notRoles:   []string{"admin"},
			attributes: map[string]string{"email": "alice@example.com"},
			expiresAt:  start.Add(time.Hour).UnixMilli(),
		},
		{name: "ES256 without alg in the JWK", token: ecS.sign(t, testClaims(nil)), ok: true, identity: "alice", roles: []string{"read"}},
		{name: "EdDSA", token: edS.sign(t, testClaims(nil)), ok: true, identity: "alice", roles: []string{"write"}},
		{name: "aud array holding the audience", token: rsaS.sign(t, testClaims(map[string]any{"aud": []any{"other", testAudience}})), ok: true, identity: "alice"},
		{name: "no exp", token: rsaS.sign(t, testClaims(map[string]any{"exp": nil})), ok: true, identity: "alice", expiresAt: guard.ExpiresNever},
		{name: "fractional exp", token: rsaS.sign(t, testClaims(map[string]any{"exp": float64(start.Unix()) + 1.5})), ok: true, identity: "alice", expiresAt: start.UnixMilli() + 1500},
		{name: "no sub", token: rsaS.sign(t, testClaims(map[string]any{"sub": nil})), ok: true, identity: ""},
		{name: "nbf now", token: rsaS.sign(t, testClaims(map[string]any{"nbf": start.Unix()})), ok: true, identity: "alice"},
		{name: "no scope", token: rsaS.sign(t, testClaims(map[string]any{"scope": nil})), ok: true, identity: "alice", notRoles: []string{"read"}},

		{name: "expired", token: rsaS.sign(t, testClaims(map[string]any{"exp": start.Add(-time.Second).Unix()}))},
		{name: "expiring now", token: rsaS.sign(t, testClaims(map[string]any{"exp": start.Unix()}))},
		{name: "nbf in the future", token: rsaS.sign(t, testClaims(map[string]any{"nbf": start.Add(time.Second).Unix()}))},
		{name: "exp not a number", token: rsaS.sign(t, testClaims(map[string]any{"exp": "tomorrow"}))},
		{name: "wrong iss", token: rsaS.sign(t, testClaims(map[string]any{"iss": "https://evil.example.com"})), why: errIssuer},
		{name: "no iss", token: rsaS.sign(t, testClaims(map[string]any{"iss": nil})), why: errIssuer},
		{name: "wrong aud", token: rsaS.sign(t, testClaims(map[string]any{"aud": "https://other.example.com"})), why: errAudience},
		{name: "aud array without the audience", token: rsaS.sign(t, testClaims(map[string]any{"aud": []any{"a", "b"}})), why: errAudience},
		{name: "missing aud", token: rsaS.sign(t, testClaims(map[string]any{"aud": nil})), why: errAudience},
		{name: "identity not a string", token: rsaS.sign(t, testClaims(map[string]any{"sub": 42})), why: errIdentity},
		{name: "unknown kid", token: rsaS.signWith(t, jose.RS256, "rsa9", testClaims(nil)), why: errUnknownKid},
		{name: "no kid", token: rsaS.signWith(t, jose.RS256, "", testClaims(nil)), why: errUnknownKid},
		{name: "alg not the JWK's alg", token: rsaS.signWith(t, jose.RS512, "rsa1", testClaims(nil)), why: errAlg},
		{name: "RSA alg on an EC key", token: rsaS.signWith(t, jose.RS256, "ec1", testClaims(nil)), why: errAlg},
		{name: "signed by another key", token: ecS.signWith(t, jose.ES256, "rsa1", testClaims(nil))},
		{name: "alg none", token: b64(`{"alg":"none","kid":"rsa1"}`) + "." + parts[1] + "."},
		{name: "alg none with the signature", token: b64(`{"alg":"none","kid":"rsa1"}`) + "." + parts[1] + "." + parts[2]},
		{name: "HS256 keyed with the RSA public key", token: hs256},
		{name: "crit header", token: rsaS.signWithHeader(t, "crit", []string{"exp"}), why: errHeader},
		{name: "tampered payload", token: tamperedPayload},
		{name: "tampered signature", token: tamperedSig},
		{name: "payload not an object", token: rsaS.signRaw(t, `[1,2]`)},
		{name: "payload trailing data", token: rsaS.signRaw(t, `{"iss":"`+testIssuer+`","aud":"`+testAudience+`"} x`)},
		{name: "empty", token: ""},
		{name: "garbage", token: "not a token"},
		{name: "two dots", token: ".."},
		{name: "four parts", token: valid + ".x"},
		{name: "bad base64", token: "!!!." + parts[1] + "." + parts[2]},
		{name: "JSON serialization", token: `{"payload":"` + parts[1] + `","protected":"` + parts[0] + `","signature":"` + parts[2] + `"}`},
		{name: "bearer prefix", token: "Bearer " + valid},
		{name: "too long", token: rsaS.sign(t, testClaims(map[string]any{"pad": strings.Repeat("x", maxToken)})), why: errTooLong},
	}
	g, _ := newTestGuard(t, testOptions(t, map[string]any{"attributes": map[string]any{"email": "email"}}))
	h := attach(g)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := reauthorize(h, tt.token)
			if !tt.ok {
				assert.Equal(t, guard.NotAuthorized, s)
				if tt.why != nil {
					_, _, err := g.verify(tt.token, g.keys.Load())
					assert.True(t, errors.Is(err, tt.why), "got %v", err)
				}
				return
			}
			require.True(t, guard.Authorized(s), "session %d", s)
			defer h.Deauthorize(s)
			assert.Equal(t, tt.identity, h.Identity(s))
			assert.Equal(t, tt.token, h.Credentials(s))
			assert.True(t, h.Verify(s, tt.roles))
			for _, r := range tt.notRoles {
				assert.False(t, h.Verify(s, []string{r}), r)
			}
			for name, want := range tt.attributes {
				assert.Equal(t, want, h.Attribute(s, name), name)
			}
			if tt.expiresAt != 0 {
				assert.Equal(t, tt.expiresAt, h.ExpiresAt(s))
			}
		})
	}
	assert.Zero(t, g.count.Load(), "every session was released")
}

// signWithHeader signs the test claims with an extra protected header.
func (s signer) signWithHeader(t testing.TB, name string, value any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithHeader("kid", s.kid).WithHeader(jose.HeaderKey(name), value)
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: s.alg, Key: s.key}, opts)
	require.NoError(t, err)
	payload, err := json.Marshal(testClaims(nil))
	require.NoError(t, err)
	jws, err := sig.Sign(payload)
	require.NoError(t, err)
	token, err := jws.CompactSerialize()
	require.NoError(t, err)
	return token
}

// signRaw signs payload as it is.
func (s signer) signRaw(t testing.TB, payload string) string {
	t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: s.alg, Key: s.key}, (&jose.SignerOptions{}).WithHeader("kid", s.kid))
	require.NoError(t, err)
	jws, err := sig.Sign([]byte(payload))
	require.NoError(t, err)
	token, err := jws.CompactSerialize()
	require.NoError(t, err)
	return token
}

// TestAlgFitsKey checks that a JWK without alg takes exactly the
// algorithms of its key type and curve.
func TestAlgFitsKey(t *testing.T) {
	rsaS, ecS := signerOf(t, "rsa"), signerOf(t, "ec")
	g, _ := newTestGuard(t, testOptions(t, map[string]any{"keys": []any{rsaS.jwk(t, false), ecS.jwk(t, false)}}))
	h := attach(g)
	claims := testClaims(nil)
	es256 := strings.Split(ecS.sign(t, claims), ".")
	tests := []struct {
		name  string
		token string
		ok    bool
	}{
		{name: "RS256", token: rsaS.signWith(t, jose.RS256, "rsa1", claims), ok: true},
		{name: "RS512", token: rsaS.signWith(t, jose.RS512, "rsa1", claims), ok: true},
		{name: "PS256", token: rsaS.signWith(t, jose.PS256, "rsa1", claims), ok: true},
		{name: "ES256", token: ecS.sign(t, claims), ok: true},
		{name: "ES256 on the RSA key", token: ecS.signWith(t, jose.ES256, "rsa1", claims)},
		{name: "RS256 on the EC key", token: rsaS.signWith(t, jose.RS256, "ec1", claims)},
		{name: "ES384 on a P-256 key", token: b64(`{"alg":"ES384","kid":"ec1"}`) + "." + es256[1] + "." + es256[2]},
		{name: "EdDSA on the EC key", token: b64(`{"alg":"EdDSA","kid":"ec1"}`) + "." + es256[1] + "." + es256[2]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := reauthorize(h, tt.token)
			assert.Equal(t, tt.ok, guard.Authorized(s), "session %d", s)
			h.Deauthorize(s)
		})
	}
}

func TestClaimPaths(t *testing.T) {
	rsaS := signerOf(t, "rsa")
	g, _ := newTestGuard(t, testOptions(t, map[string]any{
		"roles":    "realm_access.roles",
		"identity": "preferred_username",
		"attributes": map[string]any{
			"email":     "email",
			"tenant":    "org.tenant.id",
			"namespace": "https://example.com/tenant",
			"count":     "n",
			"flag":      "ok",
			"obj":       "org",
			"missing":   "nope.nothing",
		},
	}))
	h := attach(g)
	s := reauthorize(h, rsaS.sign(t, testClaims(map[string]any{
		"preferred_username":         "alice.smith",
		"org":                        map[string]any{"tenant": map[string]any{"id": "acme"}},
		"https://example.com/tenant": "namespaced",
		"n":                          12,
		"ok":                         true,
		"realm_access":               map[string]any{"roles": []any{"admin", 7, "user"}},
	})))
	require.True(t, guard.Authorized(s))
	assert.Equal(t, "alice.smith", h.Identity(s))
	assert.True(t, h.Verify(s, []string{"admin", "user"}))
	assert.False(t, h.Verify(s, []string{"read"}), "scope is not the roles claim here")
	assert.False(t, h.Verify(s, []string{"7"}), "non-string array items are no roles")
	assert.Equal(t, "alice@example.com", h.Attribute(s, "email"))
	assert.Equal(t, "acme", h.Attribute(s, "tenant"))
	assert.Equal(t, "namespaced", h.Attribute(s, "namespace"))
	assert.Equal(t, "12", h.Attribute(s, "count"))
	assert.Equal(t, "true", h.Attribute(s, "flag"))
	assert.JSONEq(t, `{"tenant":{"id":"acme"}}`, h.Attribute(s, "obj"))
	assert.Equal(t, "", h.Attribute(s, "missing"))
	assert.Equal(t, "", h.Attribute(s, "undeclared"))
}

func TestSessions(t *testing.T) {
	rsaS := signerOf(t, "rsa")
	g, clock := newTestGuard(t, testOptions(t, map[string]any{"challenge": 30}))
	h, other := attach(g), attach(g)
	token := rsaS.sign(t, testClaims(map[string]any{"exp": start.Add(time.Minute).Unix()}))

	s := reauthorize(h, token)
	require.True(t, guard.Authorized(s))
	s2 := reauthorize(other, token)
	require.True(t, guard.Authorized(s2))
	assert.NotEqual(t, s, s2, "each call opens its own session")

	expiresAt := start.Add(time.Minute).UnixMilli()
	challengeAt := expiresAt - 30_000
	for _, hh := range []guard.Handler{h, other} {
		assert.Equal(t, "alice", hh.Identity(s), "sessions are seen from every worker")
		assert.Equal(t, token, hh.Credentials(s))
		assert.Equal(t, "", hh.Attribute(s, "email"), "no attributes configured")
		assert.True(t, hh.Verify(s, nil))
		assert.True(t, hh.Verify(s, []string{}))
		assert.True(t, hh.Verify(s, []string{"read"}))
		assert.False(t, hh.Verify(s, []string{"read", "admin"}))
		assert.Equal(t, expiresAt, hh.ExpiresAt(s))
		assert.Equal(t, challengeAt, hh.ExpiringAt(s))
	}

	assert.False(t, h.Challenge(s, challengeAt-1))
	assert.True(t, other.Challenge(s, challengeAt), "challenged from another worker")
	assert.False(t, h.Challenge(s, challengeAt+1), "only once")
	assert.False(t, h.Challenge(s2, expiresAt), "not once expired")
	assert.True(t, h.Challenge(s2, expiresAt-1))

	// A new Reauthorize, nearer expiry, may be challenged again.
	clock.Add(40 * time.Second)
	s3 := reauthorize(h, token)
	require.True(t, guard.Authorized(s3))
	assert.True(t, h.Challenge(s3, clock.UnixMilli()))

	other.Deauthorize(s)
	for _, id := range []int64{s, guard.NotAuthorized, guard.NeedsPreauthorize, -1, 1 << 40} {
		assert.Equal(t, "", h.Identity(id))
		assert.Equal(t, "", h.Credentials(id))
		assert.Equal(t, "", h.Attribute(id, "email"))
		assert.False(t, h.Verify(id, nil))
		assert.Zero(t, h.ExpiresAt(id))
		assert.Zero(t, h.ExpiringAt(id))
		assert.False(t, h.Challenge(id, challengeAt))
		h.Deauthorize(id) // unknown: no effect
	}
	assert.Equal(t, "alice", h.Identity(s2), "releasing one session leaves the others")
	assert.EqualValues(t, 2, g.count.Load())
	h.Deauthorize(s2)
	h.Deauthorize(s3)
	assert.Zero(t, g.count.Load())

	// Without exp, a session never expires nor is challenged.
	s4 := reauthorize(h, rsaS.sign(t, testClaims(map[string]any{"exp": nil})))
	require.True(t, guard.Authorized(s4))
	assert.Equal(t, guard.ExpiresNever, h.ExpiresAt(s4))
	assert.Equal(t, guard.ExpiresNever, h.ExpiringAt(s4))
	assert.False(t, h.Challenge(s4, guard.ExpiresNever-1))
}

func TestChallengeWithoutOption(t *testing.T) {
	g, _ := newTestGuard(t, testOptions(t, nil))
	h := attach(g)
	s := reauthorize(h, signerOf(t, "ed").sign(t, testClaims(nil)))
	require.True(t, guard.Authorized(s))
	exp := start.Add(time.Hour).UnixMilli()
	assert.Equal(t, exp, h.ExpiringAt(s))
	assert.False(t, h.Challenge(s, exp-1))
	assert.False(t, h.Challenge(s, exp))
}

func TestCache(t *testing.T) {
	edS := signerOf(t, "ed")
	g, clock := newTestGuard(t, testOptions(t, nil))
	h := attach(g)
	token := edS.sign(t, testClaims(map[string]any{"exp": start.Add(time.Minute).Unix()}))

	s1 := reauthorize(h, token)
	require.True(t, guard.Authorized(s1))
	require.Len(t, h.cache, 1)
	cached := h.cache[token]
	s2 := reauthorize(h, token)
	require.True(t, guard.Authorized(s2))
	assert.Same(t, cached, h.cache[token], "verified once")

	clock.Add(time.Minute)
	assert.Equal(t, guard.NotAuthorized, reauthorize(h, token), "exp is checked on each call")
	assert.Same(t, cached, h.cache[token])

	// A new key set makes cached tokens verify again.
	g.keys.Store(&keySet{byKid: map[string]*key{}})
	clock.Add(-time.Minute)
	assert.Equal(t, guard.NotAuthorized, reauthorize(h, token), "the key is gone")
	assert.NotContains(t, h.cache, token)

	// The cache is bounded.
	g2, _ := newTestGuard(t, testOptions(t, nil))
	h2 := attach(g2)
	for i := range cacheSize + 10 {
		s := reauthorize(h2, edS.sign(t, testClaims(map[string]any{"jti": i})))
		require.True(t, guard.Authorized(s))
		h2.Deauthorize(s)
	}
	assert.Len(t, h2.cache, cacheSize)
}

func TestMaxSessions(t *testing.T) {
	g, _ := newTestGuard(t, testOptions(t, nil))
	g.maxSessions = 2
	g.log = slog.New(slog.DiscardHandler)
	h := attach(g)
	token := signerOf(t, "ed").sign(t, testClaims(nil))
	s1, s2 := reauthorize(h, token), reauthorize(h, token)
	require.True(t, guard.Authorized(s1))
	require.True(t, guard.Authorized(s2))
	assert.Equal(t, guard.NotAuthorized, reauthorize(h, token))
	assert.Equal(t, guard.NotAuthorized, reauthorize(h, token))
	h.Deauthorize(s1)
	s3 := reauthorize(h, token)
	assert.True(t, guard.Authorized(s3))
	assert.Greater(t, s3, s2, "ids are not reused")
}

func TestPreauthorizeAndClose(t *testing.T) {
	clock := newClock()
	gg, err := newGuard("jwt0", testOptions(t, nil), clock)
	require.NoError(t, err)
	g := gg.(*jwtGuard)

	var dispatched []func()
	h := g.Attach(guard.DispatcherFunc(func(fn func()) { dispatched = append(dispatched, fn) }))
	type result struct {
		url string
		err error
	}
	var got []result
	done := func(url string, err error) { got = append(got, result{url, err}) }

	h.Preauthorize(1, 2, 0, 0, "https://cb", done)
	require.Empty(t, got, "completes through the dispatcher")
	require.Len(t, dispatched, 1)
	dispatched[0]()
	assert.Equal(t, []result{{"", nil}}, got)
	h.Preauthorize(1, 2, 0, 0, "", nil) // no callback: nothing to do

	token := signerOf(t, "ec").sign(t, testClaims(nil))
	s := reauthorize(h, token)
	require.True(t, guard.Authorized(s))
	require.NoError(t, g.Close())
	require.NoError(t, g.Close(), "idempotent")
	assert.Equal(t, "", h.Identity(s), "sessions are dropped")
	assert.Equal(t, guard.NotAuthorized, reauthorize(h, token))
	assert.Equal(t, guard.NotAuthorized, reauthorize(g.Attach(inline), token))
	h.Preauthorize(1, 2, 0, 0, "", done)
	dispatched[1]()
	assert.Equal(t, result{"", guard.ErrClosed}, got[1])
}

func TestAttachNilDispatcher(t *testing.T) {
	g, _ := newTestGuard(t, testOptions(t, nil))
	assert.Panics(t, func() { g.Attach(nil) })
}

func TestRegistered(t *testing.T) {
	info, err := guard.Lookup(Type)
	require.NoError(t, err)
	assert.JSONEq(t, string(schema), string(info.Schema))
	g, err := guard.New(Type, "jwt0", testOptions(t, nil), nil)
	require.NoError(t, err)
	require.NoError(t, g.Close())
}
