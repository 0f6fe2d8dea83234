package http

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/binding/http/h1"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/guard"
)

// optionsSchema is the JSON Schema of an http binding's options.
var optionsSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "versions": {"type": "array", "items": {"enum": ["http/1.1"]}},
    "idle-timeout": {"type": "string"},
    "max-idle": {"type": "integer", "minimum": 0},
    "limits": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "target": {"type": "integer", "minimum": 16},
        "headers": {"type": "integer", "minimum": 1},
        "header-bytes": {"type": "integer", "minimum": 256},
        "body": {"type": "integer", "minimum": 0}
      }
    },
    "authorization": {
      "type": "object",
      "maxProperties": 1,
      "additionalProperties": {
        "type": "object",
        "additionalProperties": false,
        "required": ["credentials"],
        "properties": {
          "credentials": {
            "type": "object",
            "additionalProperties": false,
            "properties": {
              "headers": {"type": "object", "additionalProperties": {"type": "string", "pattern": "\\{credentials\\}"}},
              "query": {"type": "object", "additionalProperties": {"type": "string", "pattern": "\\{credentials\\}"}},
              "cookies": {"type": "object", "additionalProperties": {"type": "string", "pattern": "\\{credentials\\}"}}
            }
          },
          "realm": {"type": "string"}
        }
      }
    },
    "access-control": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "policy": {"enum": ["same-origin", "cross-origin"]},
        "allow": {
          "type": "object",
          "additionalProperties": false,
          "properties": {
            "origins": {"type": "array", "items": {"type": "string"}},
            "methods": {"type": "array", "items": {"type": "string"}},
            "headers": {"type": "array", "items": {"type": "string"}},
            "credentials": {"type": "boolean"}
          }
        },
        "max-age": {"type": "integer", "minimum": 0},
        "expose": {
          "type": "object",
          "additionalProperties": false,
          "properties": {"headers": {"type": "array", "items": {"type": "string"}}}
        }
      }
    }
  }
}`)

// whenSchema is one condition of a route: header values (pseudo-headers
// :method, :path, :authority and :scheme included) that must all match;
// a value may end in * to match a prefix.
var whenSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "headers": {"type": "object", "additionalProperties": {"type": "string"}}
  }
}`)

type options struct {
	Versions      []string                `yaml:"versions"`
	IdleTimeout   string                  `yaml:"idle-timeout"`
	MaxIdle       *int                    `yaml:"max-idle"`
	Limits        limitsOptions           `yaml:"limits"`
	Authorization map[string]authzOptions `yaml:"authorization"`
	AccessControl *corsOptions            `yaml:"access-control"`
}

type limitsOptions struct {
	Target      int   `yaml:"target"`
	Headers     int   `yaml:"headers"`
	HeaderBytes int   `yaml:"header-bytes"`
	Body        int64 `yaml:"body"`
}

type authzOptions struct {
	Credentials struct {
		Headers map[string]string `yaml:"headers"`
		Query   map[string]string `yaml:"query"`
		Cookies map[string]string `yaml:"cookies"`
	} `yaml:"credentials"`
	Realm string `yaml:"realm"`
}

type corsOptions struct {
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

type whenOptions struct {
	Headers map[string]string `yaml:"headers"`
}

// credentialSource is where a guard's credentials are read from: a header,
// a query parameter or a cookie, with the text around {credentials}.
type credentialSource struct {
	kind   byte // 'h' header, 'q' query, 'c' cookie
	name   []byte
	prefix []byte
	suffix []byte
}

// authorizer ties the authorization option to the guard it names.
type authorizer struct {
	guardName string
	guard     interface {
		Reauthorize(traceID, bindingID, contextID int64, credentials string) int64
		Deauthorize(session int64)
		Verify(session int64, roles []string) bool
	}
	sources []credentialSource
	realm   string
}

// cors is the compiled access-control option.
type cors struct {
	anyOrigin   bool
	origins     [][]byte
	methods     string // comma list for Access-Control-Allow-Methods
	headers     string
	anyHeaders  bool
	credentials bool
	maxAge      string
	expose      string
}

// route is a compiled route: every header condition must match.
type route struct {
	exitID int64
	when   [][]headerMatch // any of these, each all of its matches
	roles  map[string][]string
}

type headerMatch struct {
	name   []byte
	value  []byte
	prefix bool
}

// defaultIdleTimeout is how long a client keeps an idle connection, as Go's
// http.Transport does.
const defaultIdleTimeout = 90 * time.Second

// defaultMaxIdle is how many idle connections a client keeps per authority
// on each worker. HTTP/1.1 carries one request at a time on a connection,
// so a burst of N concurrent requests opens N; the pool keeps enough of
// them for the concurrency a gateway sees and closes the rest as their
// exchanges finish, rather than holding every one for idle-timeout.
const defaultMaxIdle = 256

// settings is what Attach compiles from a binding's configuration.
type settings struct {
	limits  h1.Limits
	maxBody int64
	authz   *authorizer
	cors    *cors
	routes  []route
	exitID  int64
	// idle is how long a client keeps an idle pooled connection.
	idle time.Duration
	// maxIdle bounds a client's idle connections per authority.
	maxIdle int
}

func compile(w *engine.Worker, cfg *engine.BindingConfig) (*settings, error) {
	var opts options
	if err := cfg.Options().Decode(&opts); err != nil {
		return nil, err
	}
	s := &settings{limits: h1.DefaultLimits(), maxBody: -1, exitID: cfg.ExitID, idle: defaultIdleTimeout, maxIdle: defaultMaxIdle}
	if opts.MaxIdle != nil {
		if *opts.MaxIdle < 0 {
			return nil, fmt.Errorf("http %s: max-idle %d: want 0 or more", cfg.Name, *opts.MaxIdle)
		}
		s.maxIdle = *opts.MaxIdle
	}
	if opts.IdleTimeout != "" {
		d, err := time.ParseDuration(opts.IdleTimeout)
		if err != nil {
			d, err = guard.ParseDuration(opts.IdleTimeout)
		}
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("http %s: idle-timeout %q: want a positive duration such as 90s or PT90S", cfg.Name, opts.IdleTimeout)
		}
		s.idle = d
	}
	if opts.Limits.Target > 0 {
		s.limits.MaxTarget = opts.Limits.Target
	}
	if opts.Limits.Headers > 0 {
		s.limits.MaxHeaders = opts.Limits.Headers
	}
	if opts.Limits.HeaderBytes > 0 {
		s.limits.MaxHeaderBytes = opts.Limits.HeaderBytes
	}
	if opts.Limits.Body > 0 {
		s.maxBody = opts.Limits.Body
	}
	for name, a := range opts.Authorization {
		g, ok := w.Guard(name)
		if !ok {
			return nil, fmt.Errorf("http %s: authorization names guard %q, which is not configured", cfg.Name, name)
		}
		az := &authorizer{guardName: name, guard: g, realm: a.Realm}
		add := func(kind byte, m map[string]string) {
			for k, pattern := range m {
				pre, suf, _ := strings.Cut(pattern, "{credentials}")
				n := k
				if kind == 'h' {
					n = strings.ToLower(k)
				}
				az.sources = append(az.sources, credentialSource{kind: kind, name: []byte(n), prefix: []byte(pre), suffix: []byte(suf)})
			}
		}
		add('h', a.Credentials.Headers)
		add('q', a.Credentials.Query)
		add('c', a.Credentials.Cookies)
		if len(az.sources) == 0 {
			return nil, fmt.Errorf("http %s: authorization %s: no credentials source (headers, query or cookies)", cfg.Name, name)
		}
		s.authz = az
	}
	if ac := opts.AccessControl; ac != nil && ac.Policy == "cross-origin" {
		c := &cors{credentials: ac.Allow.Credentials}
		if len(ac.Allow.Origins) == 0 {
			c.anyOrigin = true
		}
		for _, o := range ac.Allow.Origins {
			if o == "*" {
				c.anyOrigin = true
				continue
			}
			c.origins = append(c.origins, []byte(strings.TrimSuffix(o, "/")))
		}
		c.methods = strings.Join(ac.Allow.Methods, ", ")
		if c.methods == "" {
			c.methods = "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS"
		}
		for _, h := range ac.Allow.Headers {
			if h == "*" {
				c.anyHeaders = true
			}
		}
		c.headers = strings.Join(ac.Allow.Headers, ", ")
		if len(ac.Allow.Headers) == 0 {
			c.anyHeaders = true
		}
		if ac.MaxAge > 0 {
			c.maxAge = strconv.Itoa(ac.MaxAge)
		}
		c.expose = strings.Join(ac.Expose.Headers, ", ")
		s.cors = c
	}
	for _, r := range cfg.Routes() {
		id, ok := w.ResolveID(r.Exit)
		if !ok {
			return nil, fmt.Errorf("http %s: route exit %q names no binding", cfg.Name, r.Exit)
		}
		rt := route{exitID: id, roles: r.Guarded}
		for _, raw := range r.When {
			var when whenOptions
			if err := raw.Decode(&when); err != nil {
				return nil, err
			}
			var ms []headerMatch
			for name, v := range when.Headers {
				m := headerMatch{name: []byte(strings.ToLower(name)), value: []byte(v)}
				if strings.HasSuffix(v, "*") {
					m.value, m.prefix = []byte(strings.TrimSuffix(v, "*")), true
				} else if _, err := path.Match(v, ""); err != nil {
					return nil, fmt.Errorf("http %s: route header %s: %v", cfg.Name, name, err)
				}
				ms = append(ms, m)
			}
			rt.when = append(rt.when, ms)
		}
		s.routes = append(s.routes, rt)
	}
	return s, nil
}

// match reports whether the request's header lookup satisfies one of the
// route's conditions (a route without conditions matches everything).
func (r *route) match(get func(name []byte) ([]byte, bool)) bool {
	if len(r.when) == 0 {
		return true
	}
	for _, all := range r.when {
		ok := true
		for i := range all {
			m := &all[i]
			v, found := get(m.name)
			if !found || (m.prefix && !bytes.HasPrefix(v, m.value)) || (!m.prefix && !bytes.Equal(v, m.value)) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
