package client

import (
	"fmt"
	"time"

	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/http/h1"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/guard"
)

// defaultIdleTimeout is how long a client keeps an idle connection, as Go's
// http.Transport does.
const defaultIdleTimeout = 90 * time.Second

// defaultMaxIdle is how many idle connections a client keeps per authority
// on each worker. HTTP/1.1 carries one request at a time on a connection,
// so a burst of N concurrent requests opens N; the pool keeps enough of
// them for the concurrency a gateway sees and closes the rest as their
// exchanges finish, rather than holding every one for idle-timeout.
const defaultMaxIdle = 256

// settings is what Attach compiles from a client's configuration. The
// server's options (limits.body, authorization, access-control) and
// routes are accepted and not used.
type settings struct {
	limits h1.Limits
	exitID int64
	routes []http.Route
	// idle is how long the client keeps an idle pooled connection.
	idle time.Duration
	// maxIdle bounds the client's idle connections per authority.
	maxIdle int
}

func compile(cfg *engine.BindingConfig) (*settings, error) {
	var opts http.Options
	if err := cfg.Options().Decode(&opts); err != nil {
		return nil, err
	}
	s := &settings{limits: opts.Limits.Head(), exitID: cfg.ExitID, idle: defaultIdleTimeout, maxIdle: defaultMaxIdle}
	if opts.MaxIdle != nil {
		if *opts.MaxIdle < 0 {
			return nil, fmt.Errorf("http client %s: max-idle %d: want 0 or more", cfg.Name, *opts.MaxIdle)
		}
		s.maxIdle = *opts.MaxIdle
	}
	if opts.IdleTimeout != "" {
		d, err := time.ParseDuration(opts.IdleTimeout)
		if err != nil {
			d, err = guard.ParseDuration(opts.IdleTimeout)
		}
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("http client %s: idle-timeout %q: want a positive duration such as 90s or PT90S", cfg.Name, opts.IdleTimeout)
		}
		s.idle = d
	}
	return s, nil
}
