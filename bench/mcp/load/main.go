// Command load is the session-aware load generator of the MCP benchmark.
//
// It opens -sessions MCP sessions by raw HTTP (POST initialize, then POST
// notifications/initialized, keeping the Mcp-Session-Id and the negotiated
// protocol version), then runs -concurrency workers, each on its own
// keep-alive HTTP/1.1 connection, that send tools/call (or tools/list)
// requests round-robin over the sessions, first for -warmup and then for
// -duration (or -requests in all). Every response is checked: HTTP 200,
// the JSON-RPC id of the request, no JSON-RPC error, and for echo the text
// that was sent; JSON and SSE responses are both read. It reports
// requests/s, p50/p90/p99 latency and errors as one line of text and one
// line of JSON, and, for each -pid, that process's CPU time (utime+stime
// from /proc/<pid>/stat) per request over the measured window.
//
//	load -url http://127.0.0.1:7200/mcp -sessions 64 -concurrency 64 -duration 10s -warmup 2s
//	load -url ... -method tools/list -pid proxy=1234 -pid upstream=1233
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fastjson"
)

// config is the command line.
type config struct {
	url         string
	sessions    int
	concurrency int
	duration    time.Duration
	requests    int64
	warmup      time.Duration
	method      string
	tool        string
	arg         string
	version     string
	minTools    int
	timeout     time.Duration
	label       string
	jsonOut     string
	clkTck      int
	pids        pidList
	client      string
	cpuprofile  string
	rate        float64
}

// pidList is the repeated -pid name=pid flag.
type pidList []namedPID

type namedPID struct {
	name string
	pid  int
}

func (l *pidList) String() string { return fmt.Sprint(*l) }

func (l *pidList) Set(v string) error {
	name, num, ok := strings.Cut(v, "=")
	if !ok {
		name, num = "pid"+v, v
	}
	pid, err := strconv.Atoi(num)
	if err != nil || pid <= 0 {
		return fmt.Errorf("want name=pid, got %q", v)
	}
	*l = append(*l, namedPID{name, pid})
	return nil
}

// session is one initialized MCP session.
type session struct {
	id      string
	version string
}

// report is the JSON result.
type report struct {
	Label       string             `json:"label,omitempty"`
	URL         string             `json:"url"`
	Method      string             `json:"method"`
	Sessions    int                `json:"sessions"`
	Concurrency int                `json:"concurrency"`
	Version     string             `json:"protocol_version"`
	Client      string             `json:"client"`
	Seconds     float64            `json:"seconds"`
	Requests    int64              `json:"requests"`
	Errors      int64              `json:"errors"`
	FirstError  string             `json:"first_error,omitempty"`
	RPS         float64            `json:"rps"`
	P50us       float64            `json:"p50_us"`
	P90us       float64            `json:"p90_us"`
	P99us       float64            `json:"p99_us"`
	CPUusPerReq map[string]float64 `json:"cpu_us_per_req,omitempty"`
	// CPUs is each -pid's (and load's) CPU time over the window, in CPUs
	// (1 = one core busy all the time).
	CPUs map[string]float64 `json:"cpus,omitempty"`
	// CPUBusy is each CPU's busy share over the window (all processes,
	// interrupts included), from /proc/stat: "cpu0": 0.93.
	CPUBusy map[string]float64 `json:"cpu_busy,omitempty"`
}

func main() {
	var c config
	flag.StringVar(&c.url, "url", "http://127.0.0.1:7200/mcp", "MCP endpoint")
	flag.IntVar(&c.sessions, "sessions", 64, "MCP sessions to open")
	flag.IntVar(&c.concurrency, "concurrency", 64, "concurrent workers, one keep-alive connection each")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "measured duration (ignored with -requests)")
	flag.Int64Var(&c.requests, "requests", 0, "measured requests in all, instead of -duration")
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "unmeasured load before the measurement")
	flag.StringVar(&c.method, "method", "tools/call", "tools/call or tools/list")
	flag.StringVar(&c.tool, "tool", "echo", "tool to call; it must return its -arg argument as text")
	flag.StringVar(&c.arg, "arg", "text", "the echo tool's string argument")
	flag.StringVar(&c.version, "version", "2025-11-25", "protocol version to request in initialize")
	flag.IntVar(&c.minTools, "min-tools", 1, "tools/list: fewest tools a valid result lists")
	flag.DurationVar(&c.timeout, "timeout", 10*time.Second, "per-request timeout")
	flag.StringVar(&c.label, "label", "", "name of the run, for the report")
	flag.StringVar(&c.jsonOut, "json", "", "write the JSON report to this file instead of stdout")
	flag.IntVar(&c.clkTck, "clk-tck", 100, "clock ticks per second of /proc/<pid>/stat (getconf CLK_TCK)")
	flag.Var(&c.pids, "pid", "name=pid of a process whose CPU per request to report (repeatable)")
	flag.StringVar(&c.client, "client", "raw", "raw: own HTTP/1.1 on raw sockets, prebuilt requests (cheap); http: net/http")
	flag.StringVar(&c.cpuprofile, "cpuprofile", "", "write a CPU profile of the measured window to this file")
	flag.Float64Var(&c.rate, "rate", 0, "requests per second in all, paced (raw client); 0: as fast as responses come back")
	flag.Parse()
	if c.rate < 0 || (c.rate > 0 && c.client != "raw") {
		fatalf("-rate must be positive and needs -client raw")
	}
	if c.client != "raw" && c.client != "http" {
		fatalf("-client must be raw or http, got %q", c.client)
	}
	if c.concurrency > maxWorkers {
		fatalf("-concurrency must be at most %d", maxWorkers)
	}
	if c.method != "tools/call" && c.method != "tools/list" {
		fatalf("-method must be tools/call or tools/list, got %q", c.method)
	}
	if c.sessions < 1 || c.concurrency < 1 {
		fatalf("-sessions and -concurrency must be at least 1")
	}
	r, err := run(c)
	if err != nil {
		fatalf("%v", err)
	}
	fmt.Println(r.line())
	out, _ := json.Marshal(r)
	if c.jsonOut != "" {
		if err := os.WriteFile(c.jsonOut, append(out, '\n'), 0o644); err != nil {
			fatalf("%v", err)
		}
	} else {
		fmt.Println(string(out))
	}
	if r.Requests == 0 {
		fmt.Fprintf(os.Stderr, "load: no request succeeded (%d errors; first: %s)\n", r.Errors, r.FirstError)
		os.Exit(1)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "load: "+format+"\n", args...)
	os.Exit(2)
}

func (r *report) line() string {
	var b strings.Builder
	if r.Label != "" {
		fmt.Fprintf(&b, "%s: ", r.Label)
	}
	fmt.Fprintf(&b, "%s %.0f req/s, p50 %.0fµs p90 %.0fµs p99 %.0fµs, %d requests in %.1fs, %d errors, %d sessions, %d workers (%s client)",
		r.Method, r.RPS, r.P50us, r.P90us, r.P99us, r.Requests, r.Seconds, r.Errors, r.Sessions, r.Concurrency, r.Client)
	names := make([]string, 0, len(r.CPUusPerReq))
	for n := range r.CPUusPerReq {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, ", %s CPU %.1fµs/req", n, r.CPUusPerReq[n])
	}
	cpus := make([]string, 0, len(r.CPUBusy))
	for n := range r.CPUBusy {
		cpus = append(cpus, n)
	}
	slices.Sort(cpus)
	for _, n := range cpus {
		fmt.Fprintf(&b, ", %s %.0f%% busy", n, 100*r.CPUBusy[n])
	}
	if r.FirstError != "" {
		fmt.Fprintf(&b, " (first error: %s)", r.FirstError)
	}
	return b.String()
}

// generator is the shared state of one run.
type generator struct {
	c        config
	target   target     // -client raw
	loop     *eventLoop // -client raw
	client   *http.Client
	sessions []session
	workers  []*workerState
	issued   atomic.Int64 // measured requests claimed, with -requests
	errs     atomic.Int64
	errOnce  sync.Once
	firstErr string
}

// workerState is what a worker keeps from the warmup to the measured
// phase: its request counter (so ids never repeat), its prebuilt requests
// (-client raw), and its parser and buffers.
type workerState struct {
	n         int64
	templates []*template // by session index, built on first use
	scratch   []byte
	buf       bytes.Buffer
	body      []byte
	p         fastjson.Parser
}

func run(c config) (*report, error) {
	g := &generator{c: c}
	if c.client == "raw" {
		t, err := parseTarget(c.url)
		if err != nil {
			return nil, fmt.Errorf("-url: %w", err)
		}
		g.target = t
	}
	g.workers = make([]*workerState, c.concurrency)
	for w := range g.workers {
		g.workers[w] = &workerState{templates: make([]*template, c.sessions)}
	}
	g.client = &http.Client{
		Timeout: c.timeout,
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        c.concurrency + c.sessions,
			MaxIdleConnsPerHost: c.concurrency + c.sessions,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
			WriteBufferSize:     16 << 10,
			ReadBufferSize:      16 << 10,
		},
	}
	if err := g.open(); err != nil {
		return nil, err
	}
	defer g.close()
	if c.client == "raw" {
		l, err := newEventLoop(g)
		if err != nil {
			return nil, err
		}
		g.loop = l
		defer l.close()
	}

	if c.warmup > 0 {
		g.phase(time.Now().Add(c.warmup), false)
		g.errs.Store(0)
		g.firstErr = ""
		g.errOnce = sync.Once{}
	}
	// The generator's own CPU too: on a small machine it shares a core
	// with the upstream, and the reader should see how much it takes.
	c.pids = append(c.pids, namedPID{"load", os.Getpid()})
	cpu0, err := readCPU(c.pids)
	if err != nil {
		return nil, err
	}
	stat0 := readProcStat()
	if c.cpuprofile != "" {
		f, err := os.Create(c.cpuprofile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	deadline := start.Add(c.duration)
	if c.requests > 0 {
		deadline = time.Time{}
	}
	lat := g.phase(deadline, true)
	elapsed := time.Since(start)
	cpu1, err := readCPU(c.pids)
	if c.cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return nil, err
	}
	stat1 := readProcStat()

	r := &report{
		Label: c.label, URL: c.url, Method: c.method, Sessions: c.sessions, Concurrency: c.concurrency,
		Version: g.sessions[0].version, Client: c.client, Seconds: elapsed.Seconds(),
		Requests: int64(len(lat)), Errors: g.errs.Load(), FirstError: g.firstErr,
	}
	if r.Requests > 0 {
		slices.Sort(lat)
		r.RPS = float64(r.Requests) / elapsed.Seconds()
		r.P50us = quantile(lat, 0.50)
		r.P90us = quantile(lat, 0.90)
		r.P99us = quantile(lat, 0.99)
		r.CPUusPerReq = map[string]float64{}
		r.CPUs = map[string]float64{}
		for i, p := range c.pids {
			ticks := cpu1[i] - cpu0[i]
			r.CPUusPerReq[p.name] = float64(ticks) * 1e6 / float64(c.clkTck) / float64(r.Requests)
			r.CPUs[p.name] = float64(ticks) / float64(c.clkTck) / elapsed.Seconds()
		}
	}
	r.CPUBusy = cpuBusy(stat0, stat1)
	return r, nil
}

// quantile reads q from sorted latencies, in µs.
func quantile(sorted []time.Duration, q float64) float64 {
	i := int(q * float64(len(sorted)-1))
	return float64(sorted[i].Nanoseconds()) / 1e3
}

// cpuTimes is one CPU's line of /proc/stat: busy and total jiffies.
type cpuTimes struct{ busy, total int64 }

// readProcStat reads the per-CPU lines of /proc/stat (proc(5)): user nice
// system idle iowait irq softirq steal ...; idle and iowait are not busy.
// It returns nil when /proc/stat cannot be read.
func readProcStat() map[string]cpuTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil
	}
	out := map[string]cpuTimes{}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		var t cpuTimes
		for i, v := range f[1:] {
			if i >= 8 { // guest time is already in user
				break
			}
			n, _ := strconv.ParseInt(v, 10, 64)
			t.total += n
			if i != 3 && i != 4 {
				t.busy += n
			}
		}
		out[f[0]] = t
	}
	return out
}

// cpuBusy is each CPU's busy share between two readings.
func cpuBusy(a, b map[string]cpuTimes) map[string]float64 {
	out := map[string]float64{}
	for name, t1 := range b {
		t0, ok := a[name]
		if !ok || t1.total <= t0.total {
			continue
		}
		out[name] = float64(t1.busy-t0.busy) / float64(t1.total-t0.total)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// readCPU returns utime+stime, in clock ticks, of each process.
func readCPU(pids pidList) ([]int64, error) {
	out := make([]int64, len(pids))
	for i, p := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
		if err != nil {
			return nil, fmt.Errorf("cpu of %s: %w", p.name, err)
		}
		// proc(5): the command name in field 2 may hold spaces and
		// parentheses, so split after its closing one; utime and stime are
		// fields 14 and 15, so 12th and 13th after it.
		rest := b[bytes.LastIndexByte(b, ')')+1:]
		f := strings.Fields(string(rest))
		if len(f) < 13 {
			return nil, fmt.Errorf("cpu of %s: short /proc/%d/stat", p.name, p.pid)
		}
		u, err1 := strconv.ParseInt(f[11], 10, 64)
		s, err2 := strconv.ParseInt(f[12], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("cpu of %s: %w", p.name, err)
		}
		out[i] = u + s
	}
	return out, nil
}

func (g *generator) fail(err error) {
	g.errs.Add(1)
	g.errOnce.Do(func() { g.firstErr = err.Error() })
}

// open initializes the sessions, a few at a time.
func (g *generator) open() error {
	g.sessions = make([]session, g.c.sessions)
	errs := make([]error, g.c.sessions)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range g.sessions {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			g.sessions[i], errs[i] = g.initialize(i)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("open sessions: %w", err)
	}
	return nil
}

func (g *generator) initialize(i int) (session, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"sluice-bench-load","version":"1.0.0"}}}`, g.c.version)
	resp, err := g.post(session{}, []byte(body))
	if err != nil {
		return session{}, fmt.Errorf("session %d: initialize: %w", i, err)
	}
	raw, err := readResponse(resp, 0)
	if err != nil {
		return session{}, fmt.Errorf("session %d: initialize: %w", i, err)
	}
	var p fastjson.Parser
	v, err := p.ParseBytes(raw)
	if err != nil {
		return session{}, fmt.Errorf("session %d: initialize: %w", i, err)
	}
	if e := v.Get("error"); e != nil {
		return session{}, fmt.Errorf("session %d: initialize: error %s", i, e)
	}
	s := session{
		id:      resp.Header.Get("Mcp-Session-Id"),
		version: string(v.GetStringBytes("result", "protocolVersion")),
	}
	if s.version == "" {
		return session{}, fmt.Errorf("session %d: initialize: no protocolVersion in %s", i, raw)
	}
	resp, err = g.post(s, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err != nil {
		return session{}, fmt.Errorf("session %d: notifications/initialized: %w", i, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	// MCP.md §1.1 rule 3: a notification is answered 202 with no body.
	if resp.StatusCode != http.StatusAccepted {
		return session{}, fmt.Errorf("session %d: notifications/initialized: HTTP %d, want 202", i, resp.StatusCode)
	}
	return s, nil
}

// close ends the sessions with DELETE; a server may refuse (405) or have
// dropped them, so the answers are not checked.
func (g *generator) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, s := range g.sessions {
		if s.id == "" {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			req, err := http.NewRequestWithContext(ctx, http.MethodDelete, g.c.url, nil)
			if err != nil {
				return
			}
			setHeaders(req.Header, s)
			if resp, err := g.client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		}()
	}
	wg.Wait()
}

func setHeaders(h http.Header, s session) {
	// MCP.md §1.1 rule 1: Accept lists both types.
	h["Accept"] = []string{"application/json, text/event-stream"}
	h["Content-Type"] = []string{"application/json"}
	if s.id != "" {
		h["Mcp-Session-Id"] = []string{s.id}
	}
	if s.version != "" {
		// MCP.md §1.3: the negotiated version on every later request.
		h["Mcp-Protocol-Version"] = []string{s.version}
	}
}

func (g *generator) post(s session, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, g.c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	setHeaders(req.Header, s)
	return g.client.Do(req)
}

// readResponse returns the JSON-RPC response with the given id from a JSON
// or SSE body, and closes the body. On an SSE stream it skips the events
// before the response (priming events, notifications, requests).
func readResponse(resp *http.Response, id int64) ([]byte, error) {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "application/json"):
		return io.ReadAll(resp.Body)
	case strings.HasPrefix(ct, "text/event-stream"):
		return readSSE(resp.Body, id)
	default:
		return nil, fmt.Errorf("content-type %q", ct)
	}
}

// readSSE reads events until the one whose data is the response to id.
func readSSE(body io.Reader, id int64) ([]byte, error) {
	br := bufio.NewReader(body)
	var data []byte
	var p fastjson.Parser
	for {
		line, err := br.ReadSlice('\n')
		if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
			if errors.Is(err, io.EOF) {
				return nil, errors.New("SSE stream ended before the response")
			}
			return nil, fmt.Errorf("SSE: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if len(bytes.TrimSpace(data)) > 0 {
				v, perr := p.ParseBytes(data)
				if perr != nil {
					return nil, fmt.Errorf("SSE data: %w", perr)
				}
				if v.Get("method") == nil && v.GetInt64("id") == id {
					_, _ = io.Copy(io.Discard, br)
					return data, nil
				}
			}
			data = data[:0]
			continue
		}
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			d = bytes.TrimPrefix(d, []byte(" "))
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, d...)
		}
	}
}

// phase runs the workers until deadline (or until -requests are claimed
// when deadline is zero) and returns the latencies when record is set.
func (g *generator) phase(deadline time.Time, record bool) []time.Duration {
	if g.loop != nil {
		return g.loop.phase(deadline, record)
	}
	lats := make([][]time.Duration, g.c.concurrency)
	var wg sync.WaitGroup
	for w := range g.c.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lats[w] = g.worker(w, deadline, record)
		}()
	}
	wg.Wait()
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	return all
}

// worker sends one request at a time over net/http (-client http).
// JSON-RPC ids are unique across the run (requestID): the worker number
// and a counter that carries on from the warmup into the measured phase.
func (g *generator) worker(w int, deadline time.Time, record bool) []time.Duration {
	var lat []time.Duration
	if record {
		lat = make([]time.Duration, 0, 1<<14)
	}
	ws := g.workers[w]
	for {
		if deadline.IsZero() {
			if g.issued.Add(1) > g.c.requests {
				return lat
			}
		} else if !time.Now().Before(deadline) {
			return lat
		}
		ws.n++
		id := requestID(w, ws.n)
		si := int((int64(w) + ws.n*int64(g.c.concurrency)) % int64(len(g.sessions)))
		ws.body = g.request(ws.body[:0], id)
		t0 := time.Now()
		err := g.call(g.sessions[si], ws.body, id, &ws.buf, &ws.p)
		d := time.Since(t0)
		if err != nil {
			g.fail(err)
			continue
		}
		if record {
			lat = append(lat, d)
		}
	}
}

// request appends the JSON-RPC request with this id.
func (g *generator) request(b []byte, id int64) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	if g.c.method == "tools/list" {
		return append(b, `,"method":"tools/list","params":{}}`...)
	}
	b = append(b, `,"method":"tools/call","params":{"name":`...)
	b = strconv.AppendQuote(b, g.c.tool)
	b = append(b, `,"arguments":{`...)
	b = strconv.AppendQuote(b, g.c.arg)
	b = append(b, `:"m`...)
	b = strconv.AppendInt(b, id, 10)
	return append(b, `"}}}`...)
}

// call sends one request and checks its response.
func (g *generator) call(s session, body []byte, id int64, buf *bytes.Buffer, p *fastjson.Parser) error {
	resp, err := g.post(s, body)
	if err != nil {
		return err
	}
	var raw []byte
	if resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		buf.Reset()
		_, err = buf.ReadFrom(resp.Body)
		_ = resp.Body.Close()
		raw = buf.Bytes()
	} else {
		raw, err = readResponse(resp, id)
	}
	if err != nil {
		return err
	}
	return g.check(raw, id, p)
}

// check checks one JSON-RPC response: its id, no error, and the echoed
// text (tools/call) or at least -min-tools tools (tools/list).
func (g *generator) check(raw []byte, id int64, p *fastjson.Parser) error {
	v, err := p.ParseBytes(raw)
	if err != nil {
		return fmt.Errorf("response: %w", err)
	}
	if got := v.GetInt64("id"); got != id {
		return fmt.Errorf("response id %s, want %d", v.Get("id"), id)
	}
	if e := v.Get("error"); e != nil {
		return fmt.Errorf("JSON-RPC error %s", e)
	}
	result := v.Get("result")
	if result == nil {
		return fmt.Errorf("no result in %.200s", raw)
	}
	if g.c.method == "tools/list" {
		if tools := result.GetArray("tools"); len(tools) < g.c.minTools {
			return fmt.Errorf("tools/list listed %d tools, want at least %d", len(tools), g.c.minTools)
		}
		return nil
	}
	if result.GetBool("isError") {
		return fmt.Errorf("tool error %.200s", result)
	}
	text := result.GetStringBytes("content", "0", "text")
	var digits [24]byte
	want := strconv.AppendInt(append(digits[:0], 'm'), id, 10)
	if !bytes.Equal(text, want) {
		return fmt.Errorf("echo returned %q, want %q", text, want)
	}
	return nil
}
