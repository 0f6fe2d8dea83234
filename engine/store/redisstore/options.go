package redisstore

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/sluicehq/sluice/engine/guard"
	"github.com/sluicehq/sluice/engine/spi"
	"github.com/sluicehq/sluice/engine/store"
)

// schema is the JSON Schema of the redis store's options; New checks the
// same rules and gives a precise error for each.
const schema = `{
  "type": "object",
  "properties": {
    "url": {
      "title": "Redis URL, redis:// or rediss://, with optional user, password and database",
      "type": "string",
      "pattern": "^rediss?://"
    },
    "prefix": { "title": "Key prefix, default sluice:<store name>:", "type": "string" },
    "username": { "title": "User, overriding the URL's", "type": "string" },
    "password": { "title": "Password, overriding the URL's", "type": "string" },
    "tls": {
      "type": "object",
      "properties": {
        "ca": { "title": "PEM file of trusted certificate authorities", "type": "string" },
        "insecureSkipVerify": { "type": "boolean" },
        "serverName": { "type": "string" }
      },
      "additionalProperties": false
    },
    "dialTimeout": { "title": "Connect timeout, such as PT5S", "$ref": "#/$defs/duration" },
    "timeout": { "title": "Timeout of each operation, such as PT5S", "$ref": "#/$defs/duration" },
    "poolSize": { "type": "integer", "minimum": 1 },
    "notifyExpiry": {
      "title": "Enable Redis keyevent expiry notifications (CONFIG SET notify-keyspace-events Ex) so watchers see expiries",
      "type": "boolean"
    },
    "maxValueSize": { "title": "Largest value a put accepts, in bytes", "type": "integer", "minimum": 1 }
  },
  "$defs": {
    "duration": {
      "title": "ISO-8601 (PT5S) or Go (5s) duration",
      "type": "string",
      "pattern": "^([Pp]([0-9]+[Dd])?([Tt]([0-9]+[Hh])?([0-9]+[Mm])?([0-9]+([.,][0-9]{0,9})?[Ss])?)?|([0-9]+(\\.[0-9]*)?(ns|us|µs|ms|s|m|h))+)$"
    }
  },
  "required": ["url"],
  "if": { "required": ["tls"] },
  "then": { "properties": { "url": { "pattern": "^rediss://" } } },
  "additionalProperties": false
}`

// Defaults of the options that have one.
const (
	defaultTimeout      = 5 * time.Second
	defaultMaxValueSize = 16 << 20
)

// config is the parsed options of one store.
type config struct {
	redis        *goredis.Options
	prefix       string
	timeout      time.Duration
	notifyExpiry bool
	maxValueSize int
}

func invalid(key, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", store.ErrInvalidOption, key, fmt.Sprintf(format, args...))
}

// parse reads and checks options for the store configured as name.
func parse(name string, options map[string]any) (*config, error) {
	if err := spi.CheckKeys(options, store.ErrUnknownOption,
		"url", "prefix", "username", "password", "tls", "dialTimeout", "timeout",
		"poolSize", "notifyExpiry", "maxValueSize"); err != nil {
		return nil, err
	}
	raw, ok, err := optString(options, "url")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: url: required", store.ErrInvalidOption)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return nil, invalid("url", "want redis://host:port/db or rediss://..., got %q", redact(raw))
	}
	ro, err := goredis.ParseURL(raw)
	if err != nil {
		return nil, invalid("url", "%v", err)
	}
	c := &config{
		redis:        ro,
		prefix:       "sluice:" + name + ":",
		timeout:      defaultTimeout,
		maxValueSize: defaultMaxValueSize,
	}
	if s, ok, err := optString(options, "prefix"); err != nil {
		return nil, err
	} else if ok {
		c.prefix = s
	}
	if s, ok, err := optString(options, "username"); err != nil {
		return nil, err
	} else if ok {
		ro.Username = s
	}
	if s, ok, err := optString(options, "password"); err != nil {
		return nil, err
	} else if ok {
		ro.Password = s
	}
	if err := parseTLS(options["tls"], u.Scheme, ro); err != nil {
		return nil, err
	}
	ro.DialTimeout = defaultTimeout
	if d, ok, err := optDuration(options, "dialTimeout"); err != nil {
		return nil, err
	} else if ok {
		ro.DialTimeout = d
	}
	if d, ok, err := optDuration(options, "timeout"); err != nil {
		return nil, err
	} else if ok {
		c.timeout = d
	}
	if n, ok, err := optPositive(options, "poolSize"); err != nil {
		return nil, err
	} else if ok {
		ro.PoolSize = n
	}
	if n, ok, err := optPositive(options, "maxValueSize"); err != nil {
		return nil, err
	} else if ok {
		c.maxValueSize = n
	}
	if v, ok := options["notifyExpiry"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			return nil, invalid("notifyExpiry", "want boolean, got %T", v)
		}
		c.notifyExpiry = b
	}
	// Operations carry their own deadline, and a failed write is not
	// retried: a retry could apply it twice, and a caller that wants one
	// can make it.
	ro.ReadTimeout, ro.WriteTimeout = c.timeout, c.timeout
	ro.ContextTimeoutEnabled = true
	ro.MaxRetries = -1
	ro.DialerRetries = 1
	return c, nil
}

// parseTLS applies options.tls, which only a rediss:// URL may carry.
func parseTLS(v any, scheme string, ro *goredis.Options) error {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return invalid("tls", "want object, got %T", v)
	}
	if scheme != "rediss" {
		return invalid("tls", "needs a rediss:// url")
	}
	named := make(map[string]any, len(m))
	for k, v := range m {
		named["tls."+k] = v
	}
	if err := spi.CheckKeys(named, store.ErrUnknownOption, "tls.ca", "tls.insecureSkipVerify", "tls.serverName"); err != nil {
		return err
	}
	if ro.TLSConfig == nil {
		ro.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if path, ok, err := optString(named, "tls.ca"); err != nil {
		return err
	} else if ok {
		pem, err := os.ReadFile(path)
		if err != nil {
			return invalid("tls.ca", "%v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return invalid("tls.ca", "no PEM certificate in %s", path)
		}
		ro.TLSConfig.RootCAs = pool
	}
	if s, ok, err := optString(named, "tls.serverName"); err != nil {
		return err
	} else if ok {
		ro.TLSConfig.ServerName = s
	}
	if b, ok := named["tls.insecureSkipVerify"]; ok {
		skip, isBool := b.(bool)
		if !isBool {
			return invalid("tls.insecureSkipVerify", "want boolean, got %T", b)
		}
		ro.TLSConfig.InsecureSkipVerify = skip
	}
	return nil
}

// redact hides the password of a URL for error messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable url)"
	}
	return u.Redacted()
}

func optString(options map[string]any, key string) (string, bool, error) {
	v, ok := options[key]
	if !ok {
		return "", false, nil
	}
	s, isString := v.(string)
	if !isString {
		return "", false, invalid(key, "want string, got %T", v)
	}
	return s, true, nil
}

// optDuration reads a positive duration, ISO-8601 (PT5S) or Go (5s), as
// every duration option of the configuration does.
func optDuration(options map[string]any, key string) (time.Duration, bool, error) {
	s, ok, err := optString(options, key)
	if err != nil || !ok {
		return 0, false, err
	}
	d, err := guard.PositiveDuration(s)
	if err != nil {
		return 0, false, invalid(key, "%v, got %q", err, s)
	}
	return d, true, nil
}

// optPositive reads an integer of at least 1. YAML and JSON decoders give
// different numeric types, so every integral form is accepted.
func optPositive(options map[string]any, key string) (int, bool, error) {
	v, ok := options[key]
	if !ok {
		return 0, false, nil
	}
	n, ok := spi.Integer(v)
	if !ok {
		switch v.(type) {
		case float64, json.Number: // a fraction or out of range: say which
			return 0, false, invalid(key, "want integer, got %v", v)
		}
		return 0, false, invalid(key, "want integer, got %T", v)
	}
	if n < 1 || n > math.MaxInt32 {
		return 0, false, invalid(key, "want an integer from 1 to %d, got %d", math.MaxInt32, n)
	}
	return int(n), true, nil
}
