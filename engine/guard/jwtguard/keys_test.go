package jwtguard

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/engine/guard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeysURL(t *testing.T) {
	rsaS, edS := signerOf(t, "rsa"), signerOf(t, "ed")
	ks := newKeyServer(t, "/jwks", jwks(t, rsaS, edS))
	g, _ := newTestGuard(t, testOptions(t, map[string]any{"keys": ks.URL + "/jwks"}))
	assert.EqualValues(t, 1, ks.requests.Load())
	h := attach(g)
	for _, s := range []signer{rsaS, edS} {
		id := reauthorize(h, s.sign(t, testClaims(nil)))
		assert.True(t, guard.Authorized(id), s.kid)
	}
	assert.Equal(t, guard.NotAuthorized, reauthorize(h, signerOf(t, "ec").sign(t, testClaims(nil))))
}

func TestWellKnownKeys(t *testing.T) {
	rsaS := signerOf(t, "rsa")
	ks := newKeyServer(t, "/.well-known/jwks.json", jwks(t, rsaS))
	for _, issuer := range []string{ks.URL, ks.URL + "/"} {
		t.Run(issuer, func(t *testing.T) {
			g, _ := newTestGuard(t, testOptions(t, map[string]any{"issuer": issuer, "keys": nil}))
			h := attach(g)
			id := reauthorize(h, rsaS.sign(t, testClaims(map[string]any{"iss": issuer})))
			assert.True(t, guard.Authorized(id))
		})
	}
	assert.EqualValues(t, 2, ks.requests.Load())
}

func TestKeysURLErrors(t *testing.T) {
	rsaS := signerOf(t, "rsa")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(jwks(t, rsaS)) })
	mux.HandleFunc("GET /html", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "<html>login</html>") })
	mux.HandleFunc("GET /array", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `[]`) })
	mux.HandleFunc("GET /empty", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"keys": []}`) })
	mux.HandleFunc("GET /oct", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"keys": [{"kty": "oct", "kid": "1", "k": "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"}, {"kty": "RSA", "kid": "2"}]}`)
	})
	mux.HandleFunc("GET /huge", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(bytes.Repeat([]byte(" "), maxKeySet+1))
	})
	mux.HandleFunc("GET /error", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write(jwks(t, rsaS))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + l.Addr().String() + "/jwks"
	require.NoError(t, l.Close())

	tests := []struct {
		name string
		url  string
		want string
	}{
		{name: "404", url: srv.URL + "/missing", want: "status 404"},
		{name: "500", url: srv.URL + "/error", want: "status 500"},
		{name: "not JSON", url: srv.URL + "/html", want: "not a JSON Web Key Set"},
		{name: "not an object", url: srv.URL + "/array", want: "not a JSON Web Key Set"},
		{name: "no keys", url: srv.URL + "/empty", want: ErrNoKeys.Error()},
		{name: "no usable keys", url: srv.URL + "/oct", want: ErrNoKeys.Error()},
		{name: "too large", url: srv.URL + "/huge", want: "larger than"},
		{name: "unreachable", url: closed, want: "connect"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := guard.New(Type, "jwt0", testOptions(t, map[string]any{"keys": tt.url}), nil)
			require.Error(t, err)
			assert.Nil(t, g)
			assert.ErrorIs(t, err, ErrFetchKeys)
			assert.Contains(t, err.Error(), `guard/jwt "jwt0": guard/jwt: fetch keys `+tt.url)
			assert.Contains(t, err.Error(), tt.want)
		})
	}

	g, err := guard.New(Type, "jwt0", testOptions(t, map[string]any{"keys": srv.URL + "/ok"}), nil)
	require.NoError(t, err)
	require.NoError(t, g.Close())
}

func TestRedirectToHTTPRefused(t *testing.T) {
	plain := newKeyServer(t, "/jwks", jwks(t, signerOf(t, "rsa")))
	tls := httptest.NewTLSServer(http.RedirectHandler(plain.URL+"/jwks", http.StatusFound))
	t.Cleanup(tls.Close)
	client := newClient()
	client.Transport = tls.Client().Transport
	_, err := fetchKeySet(t.Context(), client, tls.URL, slog.Default())
	require.ErrorIs(t, err, ErrFetchKeys)
	assert.Contains(t, err.Error(), "redirect from https to http refused")
	assert.Zero(t, plain.requests.Load())
}

func TestRotation(t *testing.T) {
	rsaS, ecS, edS := signerOf(t, "rsa"), signerOf(t, "ec"), signerOf(t, "ed")
	ks := newKeyServer(t, "/jwks", jwks(t, rsaS))
	g, clock := newTestGuard(t, testOptions(t, map[string]any{"keys": ks.URL + "/jwks"}))
	h := attach(g)
	ecToken, edToken := ecS.sign(t, testClaims(nil)), edS.sign(t, testClaims(nil))

	// The provider adds a key within 30 s of start: not fetched yet.
	ks.set(jwks(t, rsaS, ecS))
	assert.Equal(t, guard.NotAuthorized, reauthorize(h, ecToken))
	g.waitFetch()
	assert.EqualValues(t, 1, ks.requests.Load(), "no refetch within 30 s of the last")

	// Later, an unknown kid is refused at once and fetches the set again.
	clock.Add(refetchInterval)
	assert.Equal(t, guard.NotAuthorized, reauthorize(h, ecToken), "refused without waiting for the fetch")
	g.waitFetch()
	assert.EqualValues(t, 2, ks.requests.Load())
	assert.True(t, guard.Authorized(reauthorize(h, ecToken)), "the next request sees the new key")
	assert.True(t, guard.Authorized(reauthorize(attach(g), ecToken)), "so does every worker")
	assert.True(t, guard.Authorized(reauthorize(h, rsaS.sign(t, testClaims(nil)))))

	// A second unknown kid within 30 s does not fetch again.
	ks.set(jwks(t, rsaS, ecS, edS))
	clock.Add(refetchInterval - time.Millisecond)
	assert.Equal(t, guard.NotAuthorized, reauthorize(h, edToken))
	g.waitFetch()
	assert.EqualValues(t, 2, ks.requests.Load())

	// A failed fetch keeps the keys there were.
	clock.Add(time.Millisecond)
	ks.status.Store(http.StatusServiceUnavailable)
	g.log = slog.New(slog.DiscardHandler)
	assert.Equal(t, guard.NotAuthorized, reauthorize(h, edToken))
	g.waitFetch()
	assert.EqualValues(t, 3, ks.requests.Load())
	assert.True(t, guard.Authorized(reauthorize(h, ecToken)))

	// The provider drops a key: cached tokens of it are verified again.
	clock.Add(refetchInterval)
	ks.status.Store(http.StatusOK)
	ks.set(jwks(t, edS))
	assert.Equal(t, guard.NotAuthorized, reauthorize(h, signerOf(t, "rsa").signWith(t, rsaS.alg, "rsa9", testClaims(nil))))
	g.waitFetch()
	assert.EqualValues(t, 4, ks.requests.Load())
	assert.True(t, guard.Authorized(reauthorize(h, edToken)))
	assert.Equal(t, guard.NotAuthorized, reauthorize(h, ecToken), "the dropped key no longer verifies")
}

// TestConfigKeysNoRefetch checks that keys given in the configuration are
// never fetched.
func TestConfigKeysNoRefetch(t *testing.T) {
	g, clock := newTestGuard(t, testOptions(t, nil))
	clock.Add(time.Hour)
	assert.Equal(t, guard.NotAuthorized, reauthorize(attach(g), signerOf(t, "rsa").signWith(t, "RS256", "other", testClaims(nil))))
	assert.False(t, g.fetching.Load())
}

func TestCloseStopsRefetch(t *testing.T) {
	rsaS := signerOf(t, "rsa")
	doc := jwks(t, rsaS)
	started := make(chan struct{}, 1)
	var served atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		if !served.Swap(true) {
			_, _ = w.Write(doc)
			return
		}
		started <- struct{}{}
		<-r.Context().Done() // hang until the guard gives up
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	clock := newClock()
	gg, err := newGuard("jwt0", testOptions(t, map[string]any{"keys": srv.URL + "/jwks"}), clock)
	require.NoError(t, err)
	g := gg.(*jwtGuard)
	g.log = slog.New(slog.DiscardHandler)
	clock.Add(refetchInterval)
	assert.Equal(t, guard.NotAuthorized, reauthorize(attach(g), rsaS.signWith(t, "RS256", "new", testClaims(nil))))
	<-started
	require.NoError(t, g.Close(), "returns once the fetch has stopped")
	assert.False(t, g.fetching.Load())

	// After Close no fetch starts.
	clock.Add(refetchInterval)
	g.refetch()
	assert.False(t, g.fetching.Load())
}
