package jwtguard

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Limits of fetching a key set.
const (
	fetchTimeout = 10 * time.Second
	maxKeySet    = 1 << 20 // bytes
	minRSABits   = 2048
)

// asymmetric lists the algorithms a token may be signed with: public-key
// signatures only, so neither none nor an HMAC keyed with a public key's
// bytes can pass (RFC 8725 §2.1, §3.1).
var asymmetric = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

// key is one public key that verifies signatures.
type key struct {
	pub any                     // *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey
	alg jose.SignatureAlgorithm // the JWK's alg, or "" for any that fits pub
}

// allows reports whether a token signed with alg may be verified with k:
// RFC 8725 §3.1 asks that each key be used with exactly one algorithm,
// which the JWK's alg names when present.
func (k *key) allows(alg jose.SignatureAlgorithm) bool {
	if k.alg != "" {
		return alg == k.alg
	}
	return fits(k.pub, alg)
}

// fits reports whether alg is an algorithm for keys like pub (RFC 7518
// §3.1): RSA keys for RS* and PS*, each EC curve for its own ES*, and
// Ed25519 for EdDSA.
func fits(pub any, alg jose.SignatureAlgorithm) bool {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		switch alg {
		case jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512:
			return true
		}
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return alg == jose.ES256
		case elliptic.P384():
			return alg == jose.ES384
		case elliptic.P521():
			return alg == jose.ES512
		}
	case ed25519.PublicKey:
		return alg == jose.EdDSA
	}
	return false
}

// keySet is the keys of a guard by kid. It is never changed once built;
// rotation swaps in a new one.
type keySet struct {
	byKid map[string]*key
}

// parseKey reads one JWK. It returns a nil key without error for a key
// whose use is enc: RFC 7517 §4.2 keeps it out of signature checks.
func parseKey(raw []byte) (string, *key, error) {
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(raw); err != nil {
		return "", nil, err
	}
	kid := jwk.KeyID
	if kid == "" {
		return "", nil, errors.New("no kid")
	}
	if jwk.Use == "enc" {
		return kid, nil, nil
	}
	var pub any
	switch k := jwk.Key.(type) {
	case *rsa.PublicKey:
		pub = k
	case *rsa.PrivateKey:
		pub = &k.PublicKey
	case *ecdsa.PublicKey:
		pub = k
	case *ecdsa.PrivateKey:
		pub = &k.PublicKey
	case ed25519.PublicKey:
		pub = k
	case ed25519.PrivateKey:
		pub = k.Public()
	case []byte:
		return kid, nil, errors.New("symmetric (oct) keys are not accepted")
	default:
		return kid, nil, fmt.Errorf("unsupported key type %T", jwk.Key)
	}
	if k, ok := pub.(*rsa.PublicKey); ok && k.N.BitLen() < minRSABits {
		return kid, nil, fmt.Errorf("RSA key of %d bits, want at least %d", k.N.BitLen(), minRSABits)
	}
	if k, ok := pub.(*ecdsa.PublicKey); ok && !fits(k, jose.ES256) && !fits(k, jose.ES384) && !fits(k, jose.ES512) {
		return kid, nil, errors.New("unsupported EC curve")
	}
	alg := jose.SignatureAlgorithm(jwk.Algorithm)
	if alg != "" && !fits(pub, alg) {
		return kid, nil, fmt.Errorf("alg %q is not a signature algorithm for this key", alg)
	}
	return kid, &key{pub: pub, alg: alg}, nil
}

// configKeys builds the key set of options.keys. Every key must parse,
// since a typo in the configuration should fail at start.
func configKeys(items []any) (*keySet, error) {
	set := &keySet{byKid: make(map[string]*key, len(items))}
	for i, item := range items {
		name := fmt.Sprintf("keys[%d]", i)
		if _, ok := item.(map[string]any); !ok {
			return nil, invalid(name, "want object, got %T", item)
		}
		raw, err := json.Marshal(item)
		if err != nil {
			return nil, invalid(name, "%v", err)
		}
		kid, k, err := parseKey(raw)
		switch {
		case err != nil:
			return nil, invalid(name, "%v", err)
		case set.byKid[kid] != nil:
			return nil, invalid(name, "kid %q given twice", kid)
		case k != nil:
			set.byKid[kid] = k
		}
	}
	if len(set.byKid) == 0 {
		return nil, fmt.Errorf("%w: every key in options.keys is for encryption (use: enc)", ErrNoKeys)
	}
	return set, nil
}

// parseKeySet reads a JSON Web Key Set document (RFC 7517 §5). A key that
// cannot verify signatures is skipped with a warning, so one odd key an
// identity provider publishes does not take the others down.
func parseKeySet(doc []byte, log *slog.Logger) (*keySet, error) {
	var jwks struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(doc, &jwks); err != nil {
		return nil, fmt.Errorf("not a JSON Web Key Set: %w", err)
	}
	set := &keySet{byKid: make(map[string]*key, len(jwks.Keys))}
	for i, raw := range jwks.Keys {
		kid, k, err := parseKey(raw)
		switch {
		case err != nil:
			log.Warn("jwt: key skipped", "index", i, "kid", kid, "error", err)
		case set.byKid[kid] != nil:
			log.Warn("jwt: key skipped: kid given twice", "index", i, "kid", kid)
		case k != nil:
			set.byKid[kid] = k
		}
	}
	if len(set.byKid) == 0 {
		return nil, ErrNoKeys
	}
	return set, nil
}

// fetchKeySet gets and parses the key set at url.
func fetchKeySet(ctx context.Context, client *http.Client, rawURL string, log *slog.Logger) (*keySet, error) {
	set, err := fetch(ctx, client, rawURL, log)
	if err != nil {
		if u, perr := url.Parse(rawURL); perr == nil {
			rawURL = u.Redacted() // errors are logged: keep a password out
		}
		return nil, fmt.Errorf("%w %s: %w", ErrFetchKeys, rawURL, err)
	}
	return set, nil
}

func fetch(ctx context.Context, client *http.Client, url string, log *slog.Logger) (*keySet, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	doc, err := io.ReadAll(io.LimitReader(resp.Body, maxKeySet+1))
	if err != nil {
		return nil, err
	}
	if len(doc) > maxKeySet {
		return nil, fmt.Errorf("key set larger than %d bytes", maxKeySet)
	}
	return parseKeySet(doc, log)
}

// newClient returns the HTTP client keys are fetched with. It refuses a
// redirect from https to http, which would let the network choose the keys.
func newClient() *http.Client {
	return &http.Client{
		Timeout: fetchTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
				return errors.New("redirect from https to " + req.URL.Scheme + " refused")
			}
			return nil
		},
	}
}
