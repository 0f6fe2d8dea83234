// Command soak runs a set of attacks against `sluice start` with an MCP
// gateway configuration and reports, per attack, whether its expectation
// held, whether the gateway still served, and the gateway process's RSS and
// open file descriptors.
//
// It builds ./cmd/sluice and bench/mcp/upstream, starts the upstream and a
// gateway (tcp → http → mcp server → mcp proxy → the built-in toolkit as
// route "local", and an mcp client to the upstream as route "up") on free
// loopback ports, with short timeouts and limits so that a run stays short,
// and runs each attack for at most -duration. After each attack a health
// probe (initialize, then tools/call through both routes) must succeed
// within 2 s. The last attack, SIGTERM with calls in flight, ends the
// gateway. Every connection, request and wait is bounded in count and
// time, and every process it starts is stopped by its PID.
//
//	go run ./bench/soak -duration 6s
//	make soak
//
// It exits 1 when an expectation failed or the gateway stopped serving,
// and 2 when it could not set up. README.md describes each attack.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The gateway's timeouts and limits, short so that a run stays short.
const (
	headerTimeout = 2 * time.Second
	bodyTimeout   = 2 * time.Second
	idleTimeout   = 5 * time.Second
	drainTimeout  = 10 * time.Second
	maxSessions   = 200
	maxPerAddress = 80
	maxInflight   = 16
	bodyLimit     = 1 << 20
	// slack is how much later than its timeout a connection may be closed
	// and still count as closed by it: timers, scheduling on a loaded
	// machine, and the time the attack takes to notice.
	slack = 2 * time.Second
	// probeTimeout bounds the health probe.
	probeTimeout = 2 * time.Second
)

// configYAML is the gateway; %[1]d is its port, %[2]s the upstream's URL.
const configYAML = `# The soak's gateway (bench/soak): short timeouts and limits.
name: soak
bindings:
  tcp0:
    type: tcp
    kind: server
    options:
      host: 127.0.0.1
      port: %[1]d
    exit: http0
  http0:
    type: http
    kind: server
    options:
      header-timeout: PT2S
      body-timeout: PT2S
      idle-timeout: PT5S
    routes:
      - exit: mcp0
        when:
          - headers:
              ":path": /mcp
  mcp0:
    type: mcp
    kind: server
    exit: proxy0
    options:
      hosts: ["127.0.0.1:%[1]d"]
      limits:
        sessions: 200
        sessionsPerAddress: 80
        inflight: 16
  proxy0:
    type: mcp
    kind: proxy
    routes:
      - exit: toolkit0
        when:
          - toolkit: local
      - exit: client0
        when:
          - toolkit: up
  toolkit0:
    type: toolkit
    kind: server
  client0:
    type: mcp
    kind: client
    options:
      server: %[2]s
`

// gateway is the sluice process under attack.
type gateway struct {
	addr string // host:port of the MCP endpoint
	url  string // http://addr/mcp
	cmd  *exec.Cmd
	// exited is closed when the process has ended; err is its Wait's.
	exited chan struct{}
	err    error
}

func (g *gateway) pid() int { return g.cmd.Process.Pid }

func (g *gateway) alive() bool {
	select {
	case <-g.exited:
		return false
	default:
		return true
	}
}

// attack is one row of the table: run returns whether its expectation
// held and a short detail.
type attack struct {
	name string
	run  func(ctx context.Context, g *gateway) (bool, string)
}

type options struct {
	duration time.Duration
	idle     int
	keep     bool
}

func main() {
	var o options
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "how long each attack may run (at least 6s: the connection attacks wait for the gateway's timeouts)")
	flag.IntVar(&o.idle, "idle", 1000, "idle keep-alive connections to open (fewer when the fd limit is lower)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (binaries, config, logs)")
	flag.Parse()
	if o.duration < 6*time.Second {
		fmt.Fprintln(os.Stderr, "soak: -duration must be at least 6s: the connection attacks wait for the 2 s header and 5 s idle timeouts")
		os.Exit(2)
	}
	code, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
	}
	os.Exit(code)
}

func run(o options) (int, error) {
	raiseFDLimit()
	tmp, err := os.MkdirTemp("", "sluice-soak-")
	if err != nil {
		return 2, err
	}
	if o.keep {
		fmt.Println("temporary directory:", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	fmt.Println("building sluice and the upstream")
	if err := build(tmp); err != nil {
		return 2, err
	}
	upPort, err := freePort()
	if err != nil {
		return 2, err
	}
	up, err := startProcess(filepath.Join(tmp, "upstream.log"), filepath.Join(tmp, "upstream"), "-addr", fmt.Sprintf("127.0.0.1:%d", upPort))
	if err != nil {
		return 2, err
	}
	defer stop(up)
	if err := waitPort(fmt.Sprintf("127.0.0.1:%d", upPort), up, 10*time.Second); err != nil {
		return 2, fmt.Errorf("upstream: %w (see %s)", err, filepath.Join(tmp, "upstream.log"))
	}

	port, err := freePort()
	if err != nil {
		return 2, err
	}
	cfg := filepath.Join(tmp, "soak.yaml")
	upURL := fmt.Sprintf("http://127.0.0.1:%d/mcp", upPort)
	if err := os.WriteFile(cfg, fmt.Appendf(nil, configYAML, port, upURL), 0o644); err != nil {
		return 2, err
	}
	log := filepath.Join(tmp, "sluice.log")
	cmd, err := startProcess(log, filepath.Join(tmp, "sluice"), "start", "-c", cfg, "-w", "1",
		"-e", filepath.Join(tmp, "engine"), "--drain-timeout", drainTimeout.String())
	if err != nil {
		return 2, err
	}
	g := &gateway{addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd, exited: make(chan struct{})}
	g.url = "http://" + g.addr + "/mcp"
	go func() { g.err = cmd.Wait(); close(g.exited) }()
	defer func() {
		if g.alive() {
			_ = g.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-g.exited:
			case <-time.After(3 * time.Second):
				_ = g.cmd.Process.Kill()
				<-g.exited
			}
		}
	}()
	if err := waitPort(g.addr, cmd, 10*time.Second); err != nil {
		return 2, fmt.Errorf("sluice: %w (see %s)", err, log)
	}
	if ok, detail := probe(g); !ok {
		return 2, fmt.Errorf("the gateway does not serve before any attack: %s", detail)
	}

	fmt.Printf("gateway %s (pid %d), upstream %s; each attack at most %s\n", g.url, g.pid(), upURL, o.duration)
	fmt.Printf("soak config: header-timeout %s, body-timeout %s, idle-timeout %s, limits.body %d, sessions %d, per address %d, inflight %d, drain-timeout %s\n",
		headerTimeout, bodyTimeout, idleTimeout, bodyLimit, maxSessions, maxPerAddress, maxInflight, drainTimeout)
	rss, fds := usage(g.pid())
	fmt.Printf("at start: RSS %.1f MiB, %d fds\n\n", rss, fds)

	attacks := []attack{
		{"1 slowloris", slowloris},
		{"2 slow body", slowBody},
		{"3 silent connections", silent},
		{"4 idle keep-alive", func(ctx context.Context, g *gateway) (bool, string) { return idleKeepAlive(ctx, g, o.idle) }},
		{"5 duplicate names", duplicates},
		{"6 over-limit body", overLimit},
		{"7 session flood, in-flight", flood},
		{"8 text/plain POST", contentType},
		{"9 GET closed, re-GET", reGet},
		{"10 SIGTERM in flight", sigterm},
	}
	// The detail, of varying length, comes last so the columns line up.
	row := "%-27s %-4s %-7s %7s %5s  %s\n"
	fmt.Printf(row, "attack", "held", "serving", "RSS MiB", "fds", "detail")
	failed := false
	for _, a := range attacks {
		ctx, cancel := context.WithTimeout(context.Background(), o.duration)
		held, detail := a.run(ctx, g)
		cancel()
		// Usage first: the probe's own connection is not the attack's.
		rssCol, fdsCol := "-", "-"
		if g.alive() {
			rss, fds := usage(g.pid())
			rssCol, fdsCol = fmt.Sprintf("%.1f", rss), strconv.Itoa(fds)
		}
		serving := "stopped"
		switch {
		case a.name == "10 SIGTERM in flight":
			// The gateway was meant to stop; sigterm judged its exit.
			serving = "exited"
			rssCol, fdsCol = lastRSS, lastFDs
		case g.alive():
			if ok, why := probe(g); ok {
				serving = "yes"
			} else {
				serving = "no"
				detail += "; probe: " + why
				failed = true
			}
		default:
			failed = true
		}
		if !held {
			failed = true
		}
		fmt.Printf(row, a.name, yesNo(held), serving, rssCol, fdsCol, detail)
		if !g.alive() && a.name != "10 SIGTERM in flight" {
			fmt.Printf("the gateway exited (%v); see %s\n", g.err, log)
			break
		}
	}
	if failed {
		fmt.Println("\nFAIL: an expectation failed or the gateway stopped serving")
		return 1, nil
	}
	fmt.Println("\nPASS: every expectation held and the gateway kept serving")
	return 0, nil
}

// lastRSS and lastFDs are the gateway's usage just before SIGTERM.
var lastRSS, lastFDs = "-", "-"

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

// build compiles sluice (without the profile, as make test does) and the
// upstream into dir.
func build(dir string) error {
	for _, b := range []struct{ out, pkg string }{
		{"sluice", "./cmd/sluice"},
		{"upstream", "./bench/mcp/upstream"},
	} {
		cmd := exec.Command("go", "build", "-pgo=off", "-o", filepath.Join(dir, b.out), b.pkg)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build %s: %w", b.pkg, err)
		}
	}
	return nil
}

// startProcess starts name with its output in logPath.
func startProcess(logPath, name string, args ...string) (*exec.Cmd, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	f.Close() // the child holds its own copy
	return cmd, nil
}

// stop ends a process this program started: SIGTERM, then SIGKILL after 3 s.
func stop(cmd *exec.Cmd) {
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitPort waits until addr accepts connections, for at most d, and only
// while cmd runs.
func waitPort(addr string, cmd *exec.Cmd, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
			return errors.New("exited before it listened")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("not listening on %s after %s", addr, d)
}

// raiseFDLimit lifts the soft open-file limit to the hard one; the gateway
// inherits it, so its connection capacity (half the limit) is the hard
// limit's too, and the idle attack can open its connections.
func raiseFDLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

// fdLimit is this process's soft open-file limit.
func fdLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur > 1<<20 {
		return 1 << 20
	}
	return int(l.Cur)
}

// usage is the process's VmRSS in MiB and its count of open fds.
func usage(pid int) (float64, int) {
	rss := -1.0
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				f := strings.Fields(v)
				if len(f) > 0 {
					if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
						rss = kb / 1024
					}
				}
			}
		}
	}
	fds := -1
	if d, err := os.Open(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		names, _ := d.Readdirnames(-1)
		d.Close()
		fds = len(names)
	}
	return rss, fds
}
