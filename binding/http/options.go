package http

import (
	"encoding/json"

	"github.com/sluicehq/sluice/binding/http/h1"
)

// optionsSchema is the JSON Schema of an http binding's options, for both
// kinds; [Options] is what they decode to.
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

// Options is what an http binding's options decode to, the same for both
// kinds, so that each accepts every option the schema does. Each kind
// compiles the options that are its own and leaves the others alone:
// idle-timeout and max-idle are the client's; limits.body, authorization
// and access-control the server's; the head limits both kinds'.
type Options struct {
	Versions      []string                        `yaml:"versions"`
	IdleTimeout   string                          `yaml:"idle-timeout"`
	MaxIdle       *int                            `yaml:"max-idle"`
	Limits        LimitsOptions                   `yaml:"limits"`
	Authorization map[string]AuthorizationOptions `yaml:"authorization"`
	AccessControl *AccessControlOptions           `yaml:"access-control"`
}

// LimitsOptions bounds what a binding reads: a request target, the field
// count and size of a head, and a request body. Zero leaves a bound at its
// default.
type LimitsOptions struct {
	Target      int   `yaml:"target"`
	Headers     int   `yaml:"headers"`
	HeaderBytes int   `yaml:"header-bytes"`
	Body        int64 `yaml:"body"`
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
