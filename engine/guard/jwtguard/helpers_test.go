package jwtguard

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/sluicehq/sluice/engine/guard"
	"github.com/stretchr/testify/require"
)

const (
	testIssuer   = "https://auth.example.com"
	testAudience = "https://api.example.com"
)

// start is the fake clock's first reading.
var start = time.Unix(1_700_000_000, 0)

// fakeClock is a guard.Clock that moves only when told.
type fakeClock struct{ ns atomic.Int64 }

func newClock() *fakeClock {
	c := new(fakeClock)
	c.ns.Store(start.UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time           { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Add(d time.Duration)      { c.ns.Add(int64(d)) }
func (c *fakeClock) UnixMilli() int64         { return c.Now().UnixMilli() }
func (c *fakeClock) At(d time.Duration) int64 { return c.Now().Add(d).Unix() }

// signer is a private key and the kid and alg tokens name it with.
type signer struct {
	kid string
	alg jose.SignatureAlgorithm
	key crypto.Signer
}

// testSigners are generated once: RSA keys are slow to make.
var testSigners = sync.OnceValue(func() map[string]signer {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	return map[string]signer{
		"rsa": {kid: "rsa1", alg: jose.RS256, key: rsaKey},
		"ec":  {kid: "ec1", alg: jose.ES256, key: ecKey},
		"ed":  {kid: "ed1", alg: jose.EdDSA, key: edKey},
	}
})

func signerOf(t testing.TB, name string) signer {
	t.Helper()
	s, ok := testSigners()[name]
	require.True(t, ok, name)
	return s
}

// jwk returns s's public key as a decoded JWK; withAlg adds its alg.
func (s signer) jwk(t testing.TB, withAlg bool) map[string]any {
	t.Helper()
	k := jose.JSONWebKey{Key: s.key.Public(), KeyID: s.kid, Use: "sig"}
	if withAlg {
		k.Algorithm = string(s.alg)
	}
	b, err := k.MarshalJSON()
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// sign returns a compact JWS of claims signed with alg, kid in its header.
func (s signer) signWith(t testing.TB, alg jose.SignatureAlgorithm, kid string, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid)
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: s.key}, opts)
	require.NoError(t, err)
	payload, err := json.Marshal(claims)
	require.NoError(t, err)
	jws, err := sig.Sign(payload)
	require.NoError(t, err)
	token, err := jws.CompactSerialize()
	require.NoError(t, err)
	return token
}

func (s signer) sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	return s.signWith(t, s.alg, s.kid, claims)
}

// testClaims are valid claims at the fake clock's start, changed by with.
func testClaims(with map[string]any) map[string]any {
	c := map[string]any{
		"iss":          testIssuer,
		"aud":          testAudience,
		"sub":          "alice",
		"scope":        "read write",
		"exp":          start.Add(time.Hour).Unix(),
		"nbf":          start.Add(-time.Minute).Unix(),
		"realm_access": map[string]any{"roles": []any{"admin", "user"}},
		"email":        "alice@example.com",
	}
	maps.Copy(c, with)
	for k, v := range with {
		if v == nil {
			delete(c, k)
		}
	}
	return c
}

// testOptions configure the three test signers' keys, the RSA one with
// its alg, changed by with (a nil value removes the option).
func testOptions(t testing.TB, with map[string]any) map[string]any {
	t.Helper()
	o := map[string]any{
		"issuer":   testIssuer,
		"audience": testAudience,
		"keys": []any{
			signerOf(t, "rsa").jwk(t, true),
			signerOf(t, "ec").jwk(t, false),
			signerOf(t, "ed").jwk(t, false),
		},
	}
	maps.Copy(o, with)
	for k, v := range with {
		if v == nil {
			delete(o, k)
		}
	}
	return o
}

// newTestGuard makes a guard with options and a fake clock; Close is left
// to the test's cleanup.
func newTestGuard(t testing.TB, options map[string]any) (*jwtGuard, *fakeClock) {
	t.Helper()
	clock := newClock()
	g, err := newGuard("jwt0", options, clock)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Close()) })
	return g.(*jwtGuard), clock
}

// inline runs dispatched functions at once.
var inline = guard.DispatcherFunc(func(fn func()) { fn() })

func attach(g *jwtGuard) *handler { return g.Attach(inline).(*handler) }

func reauthorize(h guard.Handler, token string) int64 { return h.Reauthorize(1, 2, 0, token) }

// jwks encodes signers' public keys as a JSON Web Key Set.
func jwks(t testing.TB, signers ...signer) []byte {
	t.Helper()
	keys := make([]any, len(signers))
	for i, s := range signers {
		keys[i] = s.jwk(t, true)
	}
	b, err := json.Marshal(map[string]any{"keys": keys})
	require.NoError(t, err)
	return b
}

// keyServer serves a JSON Web Key Set that tests can replace, and counts
// the requests for it.
type keyServer struct {
	*httptest.Server
	doc      atomic.Pointer[[]byte]
	status   atomic.Int32
	requests atomic.Int32
}

func newKeyServer(t testing.TB, path string, doc []byte) *keyServer {
	t.Helper()
	ks := &keyServer{}
	ks.set(doc)
	ks.status.Store(http.StatusOK)
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+path, func(w http.ResponseWriter, _ *http.Request) {
		ks.requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(ks.status.Load()))
		_, _ = w.Write(*ks.doc.Load())
	})
	ks.Server = httptest.NewServer(mux)
	t.Cleanup(ks.Close)
	return ks
}

func (ks *keyServer) set(doc []byte) { ks.doc.Store(&doc) }

// waitFetch waits for a refetch of g's keys, if one was started, to end.
func (g *jwtGuard) waitFetch() { g.wg.Wait() }

// b64 encodes s as a JWS part.
func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
