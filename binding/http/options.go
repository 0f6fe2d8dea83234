package http

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/sluicehq/sluice/binding/http/h1"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/guard"
)

// optionsSchema is the JSON Schema of an http binding's options, for both
// kinds; [Options] is what they decode to.
//
//go:embed options.schema.json
var optionsSchema json.RawMessage

// whenSchema is one condition of a route: header values (pseudo-headers
// :method, :path, :authority and :scheme included) that must all match;
// a value may end in * to match a prefix.
//
//go:embed when.schema.json
var whenSchema json.RawMessage

// checkVersions refuses a binding whose versions name only HTTP/2, which
// Sluice does not speak yet. Zilla negotiates among the versions listed,
// so when http/1.1 is listed too the binding serves http/1.1 alone: a
// server answers an Upgrade: h2c request in HTTP/1.1, as RFC 9110 §7.8
// lets it, and a client always sends HTTP/1.1.
func checkVersions(cfg *engine.BindingConfig) error {
	if cfg.Config == nil || cfg.Options() == nil {
		return nil
	}
	m, _ := cfg.Options().Value().(map[string]any)
	list, _ := m["versions"].([]any)
	var versions []string
	for _, v := range list {
		if s, ok := v.(string); ok {
			if s == "http/1.1" {
				return nil
			}
			versions = append(versions, s)
		}
	}
	if len(versions) == 0 {
		return nil
	}
	return fmt.Errorf("%s: http binding %s: versions %s (HTTP/2) is not supported yet; list http/1.1 to serve HTTP/1.1",
		cfg.Options().Where("versions"), cfg.Name, strings.Join(versions, ", "))
}

// Options is what an http binding's options decode to, the same for both
// kinds, so that each accepts every option the schema does. Each kind
// compiles the options that are its own and leaves the others alone:
// max-idle is the client's; header-timeout, body-timeout, limits.body,
// authorization and access-control the server's; idle-timeout and the
// head limits both kinds'.
type Options struct {
	Versions      []string                        `yaml:"versions"`
	Requests      any                             `yaml:"requests"`
	Overrides     map[string]string               `yaml:"overrides"`
	IdleTimeout   string                          `yaml:"idle-timeout"`
	HeaderTimeout string                          `yaml:"header-timeout"`
	BodyTimeout   string                          `yaml:"body-timeout"`
	MaxIdle       *int                            `yaml:"max-idle"`
	Limits        LimitsOptions                   `yaml:"limits"`
	Authorization map[string]AuthorizationOptions `yaml:"authorization"`
	AccessControl *AccessControlOptions           `yaml:"access-control"`
}

// LimitsOptions bounds what a binding reads: a request target, the field
// count and size of a head, and a request body. Zero leaves a head bound
// at its default; a body bound left out takes the server's default, and
// zero lifts it, as nginx's client_max_body_size 0 does.
type LimitsOptions struct {
	Target      int    `yaml:"target"`
	Headers     int    `yaml:"headers"`
	HeaderBytes int    `yaml:"header-bytes"`
	Body        *int64 `yaml:"body"`
}

// Head returns the limits both kinds parse heads with: h1's defaults, with
// the target, headers and header-bytes that l sets.
func (l LimitsOptions) Head() h1.Limits {
	limits := h1.DefaultLimits()
	if l.Target > 0 {
		limits.MaxTarget = l.Target
	}
	if l.Headers > 0 {
		limits.MaxHeaders = l.Headers
	}
	if l.HeaderBytes > 0 {
		limits.MaxHeaderBytes = l.HeaderBytes
	}
	return limits
}

// AuthorizationOptions names where a server reads the credentials it hands
// to a guard: headers, query parameters or cookies, each a pattern with
// {credentials} where they stand.
type AuthorizationOptions struct {
	Credentials struct {
		Headers map[string]string `yaml:"headers"`
		Query   map[string]string `yaml:"query"`
		Cookies map[string]string `yaml:"cookies"`
	} `yaml:"credentials"`
	Realm string `yaml:"realm"`
}

// CredentialPattern is one place an [AuthorizationOptions] names for a
// guard's credentials: a header (its name lower-cased), a query parameter
// or a cookie, and the text around {credentials} in its value.
type CredentialPattern struct {
	Name, Prefix, Suffix string
}

// AppendValue appends the pattern's value for cred.
func (p *CredentialPattern) AppendValue(dst []byte, cred string) []byte {
	return append(append(append(dst, p.Prefix...), cred...), p.Suffix...)
}

// Patterns returns the places a names, by kind.
func (a *AuthorizationOptions) Patterns() (headers, query, cookies []CredentialPattern) {
	return credentialPatterns(a.Credentials.Headers, true), credentialPatterns(a.Credentials.Query, false),
		credentialPatterns(a.Credentials.Cookies, false)
}

// credentialPatterns reads the patterns of one kind, name to pattern;
// header names are case-insensitive and lower-cased.
func credentialPatterns(m map[string]string, lower bool) []CredentialPattern {
	var ps []CredentialPattern
	for name, pattern := range m {
		pre, suf, _ := strings.Cut(pattern, "{credentials}")
		if lower {
			name = strings.ToLower(name)
		}
		ps = append(ps, CredentialPattern{Name: name, Prefix: pre, Suffix: suf})
	}
	return ps
}

// Timeout reads the timeout option name of cfg, value, into *d; an empty
// value leaves *d as it is. The error names the option's place in the
// configuration.
func Timeout(cfg *engine.BindingConfig, name, value string, d *time.Duration) error {
	if value == "" {
		return nil
	}
	v, err := guard.PositiveDuration(value)
	if err != nil {
		return fmt.Errorf("%s: http %s %s: %s %q: want a positive duration such as 30s or PT30S",
			cfg.Options().Where(name), cfg.Kind, cfg.Name, name, value)
	}
	*d = v
	return nil
}

// AccessControlOptions is a server's CORS policy.
type AccessControlOptions struct {
	Policy string `yaml:"policy"`
	Allow  struct {
		Origins     []string `yaml:"origins"`
		Methods     []string `yaml:"methods"`
		Headers     []string `yaml:"headers"`
		Credentials bool     `yaml:"credentials"`
	} `yaml:"allow"`
	MaxAge int `yaml:"max-age"`
	Expose struct {
		Headers []string `yaml:"headers"`
	} `yaml:"expose"`
}
