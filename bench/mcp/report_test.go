package mcp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run is one load report as report.py reads it.
type run struct {
	rps, proxy float64
	errors     int64
	busy       map[string]float64 // /proc/stat names: "cpu0": 0.99
}

// writeRun writes r as target's report for method and round in dir.
func writeRun(t *testing.T, dir, target, method string, round int, r run) {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"rps": r.rps, "p50_us": 8000.0, "p99_us": 16000.0, "errors": r.errors,
		"cpu_us_per_req": map[string]float64{"proxy": r.proxy, "upstream": 130, "load": 15},
		"cpus":           map[string]float64{"load": 0.1, "upstream": 0.8},
		"cpu_busy":       r.busy,
	})
	require.NoError(t, err)
	name := fmt.Sprintf("%s.%s.r%d.json", target, strings.ReplaceAll(method, "/", "_"), round)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
}

// goalLine runs report.py over rounds of sluice and revproxy reports (the
// same numbers for tools/list) and returns its goal line.
func goalLine(t *testing.T, rate, harness string, sluice, revproxy []run) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	require.NoError(t, err, "report.py needs python3 (.ci/peers.sh installs it)")
	dir := t.TempDir()
	for i := range sluice {
		for _, m := range []string{"tools/call", "tools/list"} {
			writeRun(t, dir, "sluice", m, i+1, sluice[i])
			writeRun(t, dir, "revproxy", m, i+1, revproxy[i])
		}
	}
	cmd := exec.Command(py, "report.py", dir, rate, fmt.Sprint(len(sluice)), "sluice revproxy", harness)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "report.py: %s", out)
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "goal") {
			return l
		}
	}
	t.Fatalf("report.py printed no goal line:\n%s", out)
	return ""
}

func busy(kv ...float64) map[string]float64 {
	m := map[string]float64{}
	for i, v := range kv {
		m[fmt.Sprintf("cpu%d", i)] = v
	}
	return m
}

const unpaced = "goal (sluice ≥ 1.5× revproxy req/s, ≤ 1/3 its CPU/req): "

// TestReportGoal checks the goal line's verdicts: the req/s half is judged
// only when the harness CPUs had headroom in revproxy's run, and a failed
// CPU half fails the goal either way.
func TestReportGoal(t *testing.T) {
	for _, tc := range []struct {
		name, rate, harness string
		sluice, revproxy    []run
		want                string
	}{
		{
			name: "harness saturated in revproxy's run: req/s half not judged", harness: "0",
			sluice:   []run{{rps: 7269, proxy: 60.5, busy: busy(1.00, 0.40)}},
			revproxy: []run{{rps: 4882, proxy: 189.1, busy: busy(0.99, 0.92)}},
			want:     unpaced + "NOT JUDGED (req/s 1.49×, CPU/req 0.32×",
		},
		{
			name: "harness saturated and the CPU half fails", harness: "0",
			sluice:   []run{{rps: 5570, proxy: 90.2, busy: busy(1.00, 0.44)}},
			revproxy: []run{{rps: 5026, proxy: 191.1, busy: busy(0.98, 0.97)}},
			want:     unpaced + "FAIL (req/s 1.11×, CPU/req 0.47×",
		},
		{
			name: "harness with headroom: both halves judged", harness: "0",
			sluice:   []run{{rps: 5465, proxy: 54.7, busy: busy(0.83, 0.36)}},
			revproxy: []run{{rps: 1294, proxy: 232.2, busy: busy(0.40, 0.43)}},
			want:     unpaced + "PASS (req/s 4.22×, CPU/req 0.24×",
		},
		{
			name: "harness with headroom, req/s short", harness: "0",
			sluice:   []run{{rps: 6000, proxy: 60, busy: busy(0.70, 0.50)}},
			revproxy: []run{{rps: 5000, proxy: 200, busy: busy(0.60, 0.97)}},
			want:     unpaced + "FAIL (req/s 1.20×, CPU/req 0.30×",
		},
		{
			name: "sluice errors fail the goal", harness: "0",
			sluice:   []run{{rps: 5465, proxy: 54.7, errors: 3, busy: busy(0.83, 0.36)}},
			revproxy: []run{{rps: 1294, proxy: 232.2, busy: busy(0.40, 0.43)}},
			want:     unpaced + "FAIL (req/s 4.22×, CPU/req 0.24×, sluice errors 3",
		},
		{
			name: "harness busy is the mean over its CPUs", harness: "0,2-3",
			sluice:   []run{{rps: 6000, proxy: 60, busy: busy(1.00, 0.50, 0.50, 0.50)}},
			revproxy: []run{{rps: 3000, proxy: 200, busy: busy(0.99, 0.97, 0.50, 0.50)}},
			want:     unpaced + "PASS (req/s 2.00×, CPU/req 0.30×",
		},
		{
			name: "paced: the CPU half alone", rate: "3000", harness: "0",
			sluice:   []run{{rps: 3000, proxy: 97.3, busy: busy(0.64, 0.34)}},
			revproxy: []run{{rps: 3000, proxy: 209.0, busy: busy(0.74, 0.66)}},
			want:     "sluice ≤ 1/3 of revproxy's CPU/req: FAIL (CPU/req 0.47×",
		},
		{
			name: "rounds are judged on the medians and counted one by one", harness: "0",
			sluice: []run{
				{rps: 7269, proxy: 60.5, busy: busy(1.00, 0.40)},
				{rps: 5465, proxy: 54.7, busy: busy(0.83, 0.36)},
				{rps: 5570, proxy: 90.2, busy: busy(1.00, 0.44)},
			},
			revproxy: []run{
				{rps: 4882, proxy: 189.1, busy: busy(0.99, 0.92)},
				{rps: 1294, proxy: 232.2, busy: busy(0.40, 0.43)},
				{rps: 5026, proxy: 191.1, busy: busy(0.98, 0.97)},
			},
			want: unpaced + "NOT JUDGED (req/s 1.14×, CPU/req 0.32×",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := goalLine(t, tc.rate, tc.harness, tc.sluice, tc.revproxy)
			assert.Contains(t, line, tc.want)
			if len(tc.sluice) == 3 {
				assert.Contains(t, line, "round by round of 3: PASS 1, FAIL 1, NOT JUDGED 1 (CPU/req ratios 0.32, 0.24, 0.47)")
			}
		})
	}
}

// cacheGoalLine runs report.py over one round of sluice (tools/call and
// the fanned-out tools/list) and cached (tools/list) and returns its cache
// goal line.
func cacheGoalLine(t *testing.T, rate string, call, list, cached run) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	require.NoError(t, err, "report.py needs python3 (.ci/peers.sh installs it)")
	dir := t.TempDir()
	writeRun(t, dir, "sluice", "tools/call", 1, call)
	writeRun(t, dir, "sluice", "tools/list", 1, list)
	writeRun(t, dir, "cached", "tools/list", 1, cached)
	out, err := exec.Command(py, "report.py", dir, rate, "1", "sluice cached", "0").CombinedOutput()
	require.NoError(t, err, "report.py: %s", out)
	assert.NotContains(t, string(out), "cached       tools/call", "cached runs tools/list only")
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "cache goal") {
			return l
		}
	}
	t.Fatalf("report.py printed no cache goal line:\n%s", out)
	return ""
}

// TestReportCacheGoal checks the cache goal's verdicts: ≥ 10× the
// fanned-out list's requests/s, and no more proxy CPU per request than a
// tools/call; a saturated harness leaves the req/s half unjudged.
func TestReportCacheGoal(t *testing.T) {
	const head = "cache goal (cached tools/list ≥ 10× fanned-out req/s, CPU/req ≤ a tools/call's): "
	call := run{rps: 7000, proxy: 60, busy: busy(0.9, 0.5)}
	list := run{rps: 2000, proxy: 200, busy: busy(0.6, 0.9)}
	for _, tc := range []struct {
		name, rate string
		cached     run
		want       string
	}{
		{"both halves pass", "", run{rps: 25000, proxy: 30, busy: busy(0.5, 0.4)}, head + "PASS (req/s 12.50×, CPU/req 0.50×"},
		{"req/s short with harness headroom", "", run{rps: 9000, proxy: 30, busy: busy(0.5, 0.4)}, head + "FAIL (req/s 4.50×"},
		{"harness saturated", "", run{rps: 9000, proxy: 30, busy: busy(0.99, 0.4)}, head + "NOT JUDGED (req/s 4.50×"},
		{"CPU half fails", "", run{rps: 25000, proxy: 90, busy: busy(0.5, 0.4)}, head + "FAIL (req/s 12.50×, CPU/req 1.50×"},
		{"errors fail", "", run{rps: 25000, proxy: 30, errors: 2, busy: busy(0.5, 0.4)}, head + "FAIL"},
		{"paced: CPU half alone", "3000", run{rps: 3000, proxy: 30, busy: busy(0.5, 0.4)}, head + "PASS (req/s 1.50×, CPU/req 0.50×"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Contains(t, cacheGoalLine(t, tc.rate, call, list, tc.cached), tc.want)
		})
	}
}
