package jwtguard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/sluicehq/sluice/engine/guard"
)

// maxToken bounds the credentials Reauthorize looks at; it also bounds
// what the verification cache holds.
const maxToken = 32 << 10

// noNotBefore is the nbf of a token that has none.
const noNotBefore = math.MinInt64

// Reasons a token is refused, logged at Debug.
var (
	errTooLong     = errors.New("token too long")
	errUnknownKid  = errors.New("unknown kid")
	errAlg         = errors.New("alg not allowed for the key")
	errHeader      = errors.New("crit or b64 header")
	errIssuer      = errors.New("wrong iss")
	errAudience    = errors.New("aud does not hold the audience")
	errExpired     = errors.New("expired")
	errNotYetValid = errors.New("nbf in the future")
	errIdentity    = errors.New("identity claim is not a string")
)

// claims is what a verified token grants. It is never changed once built,
// so the verification cache and sessions share it.
type claims struct {
	keys       *keySet // the key set the signature was checked with
	token      string  // the token itself: the sessions' credentials
	identity   string
	roles      []string
	attributes map[string]string
	exp        int64 // Unix ms, or ExpiresNever
	nbf        int64 // Unix ms, or noNotBefore
}

// verify checks token's signature with keys, then its iss and aud, and
// reads the claims the guard needs; the times are left to the caller.
// For an unknown kid it returns errUnknownKid and the kid.
func (g *jwtGuard) verify(token string, keys *keySet) (*claims, string, error) {
	if len(token) > maxToken {
		return nil, "", errTooLong
	}
	jws, err := jose.ParseSignedCompact(token, asymmetric)
	if err != nil {
		return nil, "", err
	}
	if len(jws.Signatures) != 1 {
		return nil, "", errors.New("want one signature")
	}
	h := jws.Signatures[0].Header
	// JWTs use neither; refusing them leaves go-jose's unencoded-payload
	// path out of reach.
	if _, ok := h.ExtraHeaders["crit"]; ok {
		return nil, "", errHeader
	}
	if _, ok := h.ExtraHeaders["b64"]; ok {
		return nil, "", errHeader
	}
	k := keys.byKid[h.KeyID]
	if k == nil {
		return nil, h.KeyID, errUnknownKid
	}
	if !k.allows(jose.SignatureAlgorithm(h.Algorithm)) {
		return nil, "", errAlg
	}
	payload, err := jws.Verify(k.pub)
	if err != nil {
		return nil, "", err
	}
	c, err := g.readClaims(payload)
	if err != nil {
		return nil, "", err
	}
	c.keys = keys
	return c, "", nil
}

// readClaims decodes a verified payload and checks iss and aud.
func (g *jwtGuard) readClaims(payload []byte) (*claims, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("claims: %w", err)
	}
	if m == nil || dec.More() {
		return nil, errors.New("claims: not one object")
	}
	if iss, _ := m["iss"].(string); iss != g.cfg.issuer {
		return nil, errIssuer
	}
	if !hasAudience(m["aud"], g.cfg.audience) {
		return nil, errAudience
	}
	c := &claims{exp: guard.ExpiresNever, nbf: noNotBefore}
	var err error
	if v, ok := m["exp"]; ok {
		if c.exp, err = numericDate("exp", v); err != nil {
			return nil, err
		}
	}
	if v, ok := m["nbf"]; ok {
		if c.nbf, err = numericDate("nbf", v); err != nil {
			return nil, err
		}
	}
	switch v := claim(m, g.cfg.identity).(type) {
	case nil:
	case string:
		c.identity = v
	default:
		return nil, errIdentity
	}
	c.roles = roles(claim(m, g.cfg.roles))
	if len(g.cfg.attributes) > 0 {
		c.attributes = make(map[string]string, len(g.cfg.attributes))
		for name, path := range g.cfg.attributes {
			if s, ok := text(claim(m, path)); ok {
				c.attributes[name] = s
			}
		}
	}
	return c, nil
}

// hasAudience reports whether aud, a string or an array of strings (RFC
// 7519 §4.1.3), holds want.
func hasAudience(aud any, want string) bool {
	switch v := aud.(type) {
	case string:
		return v == want
	case []any:
		return slices.Contains(v, any(want))
	}
	return false
}

// numericDate reads a NumericDate (RFC 7519 §2), seconds that may have a
// fraction, as Unix ms, saturating far past and future.
func numericDate(name string, v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s: not a number", name)
	}
	if s, err := n.Int64(); err == nil {
		switch {
		case s > math.MaxInt64/1000:
			return math.MaxInt64, nil
		case s < math.MinInt64/1000:
			return math.MinInt64, nil
		}
		return s * 1000, nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	switch ms := f * 1000; {
	case ms >= math.MaxInt64:
		return math.MaxInt64, nil
	case ms <= math.MinInt64:
		return math.MinInt64, nil
	default:
		return int64(math.Floor(ms)), nil
	}
}

// claim returns the value at path: the claim named path itself when there
// is one (namespaced claims such as https://example.com/roles have dots),
// otherwise the value found by walking path's dot-separated parts through
// nested objects, as Zilla does.
func claim(m map[string]any, path string) any {
	if v, ok := m[path]; ok {
		return v
	}
	var cur any = m
	for part := range strings.SplitSeq(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = obj[part]
	}
	return cur
}

// roles reads a roles claim: a space-separated string, as OAuth's scope
// is (RFC 8693 §4.2), or an array whose strings are the roles.
func roles(v any) []string {
	switch v := v.(type) {
	case string:
		return strings.Fields(v)
	case []any:
		out := make([]string, 0, len(v))
		for _, item := range v {
			if s, ok := item.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// text gives a claim's value as an attribute: a string as it is, any other
// JSON value in its JSON form; an absent or null claim gives none.
func text(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case string:
		return v, true
	case json.Number:
		return string(v), true
	case bool:
		return strconv.FormatBool(v), true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	return string(b), true
}
