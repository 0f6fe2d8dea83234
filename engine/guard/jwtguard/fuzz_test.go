package jwtguard

import (
	"crypto/ed25519"
	"log/slog"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/sluicehq/sluice/engine/guard"
)

// fixedSigner is an Ed25519 key from a fixed seed, so the tokens in
// testdata/fuzz verify in every run.
func fixedSigner() signer {
	seed := []byte(strings.Repeat("sluice-jwtguard-fuzz-seed", 2)[:ed25519.SeedSize])
	return signer{kid: "fixed", alg: jose.EdDSA, key: ed25519.NewKeyFromSeed(seed)}
}

// fixedToken is a valid token of fixedSigner at the fake clock's start.
func fixedToken(t testing.TB) string {
	return fixedSigner().sign(t, testClaims(nil))
}

func fixedGuard(t testing.TB) *jwtGuard {
	t.Helper()
	g, _ := newTestGuard(t, testOptions(t, map[string]any{
		"keys":       []any{fixedSigner().jwk(t, true), signerOf(t, "rsa").jwk(t, true)},
		"roles":      "realm_access.roles",
		"attributes": map[string]any{"email": "email", "deep": "a.b.c.d"},
	}))
	g.log = slog.New(slog.DiscardHandler)
	return g
}

// FuzzReauthorize checks that no input makes Reauthorize panic, and that
// whatever it authorizes carries the claims a real token was signed with.
func FuzzReauthorize(f *testing.F) {
	valid := fixedToken(f)
	parts := strings.Split(valid, ".")
	for _, seed := range []string{
		valid,
		"",
		"..",
		"a.b.c",
		valid + ".",
		b64(`{"alg":"none","kid":"fixed"}`) + "." + parts[1] + ".",
		b64(`{"alg":"HS256","kid":"fixed"}`) + "." + parts[1] + "." + parts[2],
		b64(`{"alg":"EdDSA","kid":"fixed","crit":["b64"],"b64":false}`) + "." + parts[1] + "." + parts[2],
		b64(`{"alg":"EdDSA","kid":"fixed","jwk":{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}}`) + "." + parts[1] + "." + parts[2],
		parts[0] + "." + b64(`{"exp":1e999,"nbf":-1e999,"aud":[1,{}],"iss":null}`) + "." + parts[2],
		`{"payload":"` + parts[1] + `","protected":"` + parts[0] + `","signature":"` + parts[2] + `"}`,
	} {
		f.Add(seed)
	}
	g := fixedGuard(f)
	h := attach(g)
	f.Fuzz(func(t *testing.T, token string) {
		s := h.Reauthorize(1, 2, 0, token)
		if s == guard.NotAuthorized {
			return
		}
		if !guard.Authorized(s) {
			t.Fatalf("Reauthorize(%q) = %d", token, s)
		}
		if id := h.Identity(s); id != "alice" {
			t.Fatalf("Reauthorize(%q) authorized identity %q", token, id)
		}
		if !h.Verify(s, []string{"admin", "user"}) {
			t.Fatalf("Reauthorize(%q) lost the roles", token)
		}
		h.Deauthorize(s)
	})
}

// TestFixedToken checks that the fuzz seed corpus starts from a token the
// fuzz guard accepts, so mutations explore the paths past verification.
func TestFixedToken(t *testing.T) {
	s := reauthorize(attach(fixedGuard(t)), fixedToken(t))
	if !guard.Authorized(s) {
		t.Fatal("the fixed token is refused")
	}
}
