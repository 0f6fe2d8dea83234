package jwtguard

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/engine/guard"
	"github.com/sluicehq/sluice/engine/spi"
)

// Defaults of the options that have one, as in Zilla.
const (
	defaultRoles    = "scope"
	defaultIdentity = "sub"
)

// attributeName is the pattern of an attribute's name, as in the schema.
var attributeName = regexp.MustCompile(`^[a-zA-Z]+[a-zA-Z0-9._-]*$`)

// config is the parsed options of one jwt guard.
type config struct {
	issuer     string
	audience   string
	roles      string // claim path
	identity   string // claim path
	attributes map[string]string
	keys       []any  // the JWK objects of options.keys, or nil
	keysURL    string // where the key set is fetched from when keys is nil
	challenge  int64  // Unix ms before expiry
}

func invalid(key, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", guard.ErrInvalidOption, key, fmt.Sprintf(format, args...))
}

// parse reads and checks the options of a jwt guard.
func parse(options map[string]any) (config, error) {
	c := config{roles: defaultRoles, identity: defaultIdentity}
	err := spi.CheckKeys(options, guard.ErrUnknownOption,
		"issuer", "audience", "roles", "keys", "challenge", "identity", "attributes")
	if err != nil {
		return c, err
	}
	for _, o := range []struct {
		key      string
		dst      *string
		required bool
	}{
		{"issuer", &c.issuer, true},
		{"audience", &c.audience, true},
		{"roles", &c.roles, false},
		{"identity", &c.identity, false},
	} {
		v, ok := options[o.key]
		if !ok {
			if o.required {
				// A guard that checked no iss or aud would take tokens
				// minted for another service.
				return c, invalid(o.key, "required, so that tokens minted for other services are refused")
			}
			continue
		}
		s, ok := v.(string)
		switch {
		case !ok:
			return c, invalid(o.key, "want string, got %T", v)
		case s == "":
			return c, invalid(o.key, "must not be empty")
		}
		*o.dst = s
	}
	if v, ok := options["challenge"]; ok {
		n, ok := spi.Integer(v)
		if !ok || n < 0 || n > math.MaxInt64/1000 {
			return c, invalid("challenge", "want a non-negative integer of seconds, got %v", v)
		}
		c.challenge = n * 1000
	}
	if c.attributes, err = parseAttributes(options["attributes"]); err != nil {
		return c, err
	}
	switch v := options["keys"].(type) {
	case nil:
		// Zilla's default: the issuer's well-known key set.
		if !strings.HasSuffix(c.issuer, "/") {
			c.keysURL = c.issuer + "/.well-known/jwks.json"
		} else {
			c.keysURL = c.issuer + ".well-known/jwks.json"
		}
		if err := checkURL(c.keysURL); err != nil {
			return c, invalid("issuer", "keys is absent, so the issuer must be an http(s) URL to find them under: %v", err)
		}
	case string:
		if err := checkURL(v); err != nil {
			return c, invalid("keys", "%v", err)
		}
		c.keysURL = v
	case []any:
		if len(v) == 0 {
			return c, invalid("keys", "must not be empty")
		}
		c.keys = v
	default:
		return c, invalid("keys", "want an array of keys or a URL, got %T", v)
	}
	return c, nil
}

func parseAttributes(v any) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid("attributes", "want object, got %T", v)
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make(map[string]string, len(m))
	for _, name := range names {
		path, ok := m[name].(string)
		switch {
		case !attributeName.MatchString(name):
			return nil, invalid("attributes", "bad name %q", name)
		case !ok:
			return nil, invalid("attributes."+name, "want string, got %T", m[name])
		case path == "":
			return nil, invalid("attributes."+name, "must not be empty")
		}
		out[name] = path
	}
	return out, nil
}

// checkURL accepts an absolute http or https URL with a host.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("want an http(s) URL, got %q", s)
	}
	return nil
}
