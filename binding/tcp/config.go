package tcp

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/guard"
)

// optionsSchema is the JSON Schema of the binding's options (Zilla's
// tcp.schema.patch.json, plus steering and write-timeout). A port is a number, a "from-to"
// range or a list of either; the ranges themselves are checked by parse,
// which can say what is wrong with one.
//
//go:embed options.schema.json
var optionsSchema json.RawMessage

// whenSchema is one route condition: the peer's address (the remote one
// for a server, the destination for a client) in a CIDR block, and the
// port (the local one for a server, the destination for a client).
//
//go:embed when.schema.json
var whenSchema json.RawMessage

// Steering modes of a server's listeners.
const (
	steerNone = "none"
	steerEBPF = "ebpf"
)

// maxPorts bounds the ports one server listens on, each one a socket per
// worker.
const maxPorts = 1024

// defaultBacklog is the listen backlog when none is configured: the
// kernel caps it at net.core.somaxconn.
const defaultBacklog = 4096

// defaultWriteTimeout is how long a socket may take none of the bytes
// waiting for it before the connection is reset, as nginx's send_timeout.
const defaultWriteTimeout = 60 * time.Second

// options are the decoded options, as YAML has them.
type options struct {
	Host      string `yaml:"host"`
	Port      any    `yaml:"port"`
	Backlog   int    `yaml:"backlog"`
	NoDelay   *bool  `yaml:"nodelay"`
	KeepAlive bool   `yaml:"keepalive"`
	Steering  string `yaml:"steering"`
	// WriteTimeout is Sluice's own: Zilla's tcp binding has no timeout.
	WriteTimeout string `yaml:"write-timeout"`
}

// condition is one route's when item.
type condition struct {
	CIDR string `yaml:"cidr"`
	Port any    `yaml:"port"`
}

// settings are a binding's checked options and routes.
type settings struct {
	host      string
	addr      netip.Addr // host as an address; invalid for a client host name
	ports     []uint16
	backlog   int
	nodelay   bool
	keepalive bool
	steering  string
	routes    []route
	// writeTimeout bounds how long bytes wait for a socket that takes
	// none of them.
	writeTimeout time.Duration
}

// route is a checked route: its exit and conditions, any of which may
// match (an empty list matches everything).
type route struct {
	exitID int64
	when   []match
}

type match struct {
	prefix netip.Prefix // zero: any address
	lo, hi uint16       // zero: any port
}

func (m *match) matches(addr netip.Addr, port uint16) bool {
	if m.prefix.IsValid() && !m.prefix.Contains(addr.Unmap()) {
		return false
	}
	return m.lo == 0 || port >= m.lo && port <= m.hi
}

// resolve returns the exit of the first route that matches addr and port
// (a client's routes have none), and whether any matched.
func (s *settings) resolve(addr netip.Addr, port uint16) (int64, bool) {
	for i := range s.routes {
		r := &s.routes[i]
		if len(r.when) == 0 {
			return r.exitID, true
		}
		for j := range r.when {
			if r.when[j].matches(addr, port) {
				return r.exitID, true
			}
		}
	}
	return 0, false
}

// parse checks cfg for a worker: options, the kind's requirements and the
// routes, whose exits it resolves with w.
func parse(w *engine.Worker, cfg *engine.BindingConfig) (*settings, error) {
	if cfg.Kind != config.KindServer && cfg.Kind != config.KindClient {
		return nil, fmt.Errorf("%w %q: tcp is a server or a client", ErrKind, cfg.Kind)
	}
	raw := cfg.Options()
	var o options
	if err := raw.Decode(&o); err != nil {
		return nil, err
	}
	s := &settings{host: o.Host, backlog: o.Backlog, nodelay: true, keepalive: o.KeepAlive, steering: o.Steering,
		writeTimeout: defaultWriteTimeout}
	if o.WriteTimeout != "" {
		d, err := guard.PositiveDuration(o.WriteTimeout)
		if err != nil {
			return nil, fmt.Errorf("%s: write-timeout %q: want a positive duration such as 60s or PT60S", raw.Where("write-timeout"), o.WriteTimeout)
		}
		s.writeTimeout = d
	}
	if o.NoDelay != nil {
		s.nodelay = *o.NoDelay
	}
	if s.backlog == 0 {
		s.backlog = defaultBacklog
	}
	if s.backlog < 1 || s.backlog > math.MaxInt32 {
		return nil, fmt.Errorf("%s: backlog %d: want at least 1", raw.Where("backlog"), o.Backlog)
	}
	if s.steering == "" {
		s.steering = steerNone
	}
	if s.steering != steerNone && s.steering != steerEBPF {
		return nil, fmt.Errorf("%s: steering %q: want none or ebpf", raw.Where("steering"), o.Steering)
	}
	if o.Port != nil {
		ports, err := parsePorts(o.Port)
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %w", raw.Where("port"), ErrPort, err)
		}
		s.ports = ports
	}
	server := cfg.Kind == config.KindServer
	if server && s.host == "" {
		s.host = "0.0.0.0"
	}
	switch {
	case server && len(s.ports) == 0:
		return nil, fmt.Errorf("%s: %w: a server needs a port to listen on", raw.Where("port"), ErrPort)
	case !server && len(s.ports) > 1:
		return nil, fmt.Errorf("%s: %w: a client connects to one port, not %d", raw.Where("port"), ErrPort, len(s.ports))
	case !server && s.steering != steerNone:
		return nil, fmt.Errorf("%s: steering applies to a server's listeners, not to a client", raw.Where("steering"))
	}
	if s.host != "" {
		addr, err := parseHost(s.host)
		switch {
		case err == nil:
			s.addr = addr
		case server:
			return nil, fmt.Errorf("%s: %w %q: a server listens on an IP address or localhost", raw.Where("host"), ErrHost, s.host)
		case !validHostname(s.host):
			return nil, fmt.Errorf("%s: %w %q: neither an IP address nor a host name", raw.Where("host"), ErrHost, s.host)
		}
	}
	if err := s.parseRoutes(w, cfg); err != nil {
		return nil, err
	}
	if server && len(s.routes) == 0 {
		return nil, fmt.Errorf("%w: a server needs an exit or routes to send its connections to", ErrNoExit)
	}
	return s, nil
}

// parseRoutes checks the routes; for a server the binding's exit follows
// them as the route that matches everything, as in Zilla. A client's
// routes restrict the destinations it connects to.
func (s *settings) parseRoutes(w *engine.Worker, cfg *engine.BindingConfig) error {
	for i, r := range cfg.Routes() {
		rt := route{}
		if cfg.Kind == config.KindServer {
			id, ok := w.ResolveID(r.Exit)
			if r.Exit == "" || !ok {
				return fmt.Errorf("%s: routes[%d].exit: %w: %q names no binding", r.Pos, i, ErrNoExit, r.Exit)
			}
			rt.exitID = id
		}
		for _, raw := range r.When {
			var c condition
			if err := raw.Decode(&c); err != nil {
				return err
			}
			m, err := parseCondition(c)
			if err != nil {
				return fmt.Errorf("%s: %w: %w", raw.Where(""), ErrRoute, err)
			}
			rt.when = append(rt.when, m)
		}
		s.routes = append(s.routes, rt)
	}
	if cfg.Kind == config.KindServer && cfg.ExitID != 0 {
		s.routes = append(s.routes, route{exitID: cfg.ExitID})
	}
	return nil
}

func parseCondition(c condition) (match, error) {
	var m match
	if c.CIDR != "" {
		p, err := netip.ParsePrefix(strings.TrimSpace(c.CIDR))
		if err != nil {
			return m, fmt.Errorf("cidr %q: want an address block such as 10.0.0.0/8", c.CIDR)
		}
		m.prefix = p.Masked()
	}
	if c.Port != nil {
		ports, err := parsePortRange(c.Port)
		if err != nil {
			return m, err
		}
		m.lo, m.hi = ports[0], ports[1]
	}
	return m, nil
}

// parsePorts reads a port: a number, a "from-to" string, or a list of
// those, in order and without repeats.
func parsePorts(v any) ([]uint16, error) {
	items, ok := v.([]any)
	if !ok {
		items = []any{v}
	}
	var ports []uint16
	seen := map[uint16]bool{}
	for _, item := range items {
		r, err := parsePortRange(item)
		if err != nil {
			return nil, err
		}
		if int(r[1])-int(r[0])+1+len(ports) > maxPorts {
			return nil, fmt.Errorf("more than %d ports", maxPorts)
		}
		for p := int(r[0]); p <= int(r[1]); p++ {
			if !seen[uint16(p)] {
				seen[uint16(p)] = true
				ports = append(ports, uint16(p))
			}
		}
	}
	return ports, nil
}

// parsePortRange reads one port or range as [from, to].
func parsePortRange(v any) ([2]uint16, error) {
	var lo, hi int64
	switch x := v.(type) {
	case int:
		lo, hi = int64(x), int64(x)
	case int64:
		lo, hi = x, x
	case uint64:
		lo, hi = math.MaxInt64, math.MaxInt64
	case string:
		a, b, isRange := strings.Cut(x, "-")
		var err1, err2 error
		lo, err1 = strconv.ParseInt(strings.TrimSpace(a), 10, 64)
		hi, err2 = lo, nil
		if isRange {
			hi, err2 = strconv.ParseInt(strings.TrimSpace(b), 10, 64)
		}
		if err1 != nil || err2 != nil {
			return [2]uint16{}, fmt.Errorf("%q: want a number or a range such as 8080-8081", x)
		}
	default:
		return [2]uint16{}, fmt.Errorf("%v: want a number or a range such as 8080-8081", v)
	}
	if lo < 1 || lo > math.MaxUint16 || hi < 1 || hi > math.MaxUint16 {
		return [2]uint16{}, fmt.Errorf("%s is out of range 1-65535", portText(lo, hi))
	}
	if lo > hi {
		return [2]uint16{}, fmt.Errorf("%s: the range ends before it starts", portText(lo, hi))
	}
	return [2]uint16{uint16(lo), uint16(hi)}, nil
}

func portText(lo, hi int64) string {
	if lo == hi {
		return strconv.FormatInt(lo, 10)
	}
	return strconv.FormatInt(lo, 10) + "-" + strconv.FormatInt(hi, 10)
}

// parseHost reads an IP literal, or localhost as the IPv4 loopback
// address (no name lookup: see the package doc).
func parseHost(host string) (netip.Addr, error) {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return netip.AddrFrom4([4]byte{127, 0, 0, 1}), nil
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return netip.Addr{}, err
	}
	if a.Zone() != "" {
		return netip.Addr{}, errors.New("zoned addresses are not supported")
	}
	return a, nil
}

// validHostname reports whether s may be a DNS name: labels of letters,
// digits, hyphens and underscores, at most 253 bytes.
func validHostname(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
