#!/usr/bin/env bash
# MCP gateway benchmark, side by side on loopback, in one run:
#   (a) load → upstream                      (no proxy: the ceiling)
#   (b) load → sluice → upstream             (gateway.yaml; tools/list via gateway-list.yaml)
#   (b') load → sluice, tools/list from the proxy's cache (gateway-list-cached.yaml)
#   (c) load → revproxy → upstream           (httputil.ReverseProxy, MCP-unaware)
#   (d) load → gosdkproxy → upstream         (go-sdk server + client sessions)
#   (e) load → nginx → upstream              (optional reference: C, MCP-unaware)
#   (f) load → haproxy → upstream            (optional reference: C, MCP-unaware)
# Each gets the same warmup and measured duration, for tools/call echo and
# for tools/list. For each proxy it reports requests/s, p50/p99 and the
# proxy process's CPU µs per request (utime+stime delta from
# /proc/<pid>/stat over the measured window, ÷ requests), then checks the
# goal: sluice ≥ 1.5× revproxy's tools/call requests/s at ≤ 1/3 of its CPU
# per request; and the cache goal: a cached tools/list ≥ 10× the fanned-out
# one's requests/s, at no more CPU per request than a tools/call. The goal prints PASS, FAIL or NOT JUDGED (report.py); it
# never fails the script, and a sluice that does not build or start is
# reported, not fatal.
#
#   bench/mcp/run.sh
#   DURATION=30s WARMUP=5s bench/mcp/run.sh
#   PIN=0 bench/mcp/run.sh       # no taskset pinning
#   RATE=3000 bench/mcp/run.sh   # every target at the same offered load
#   ROUNDS=3 TARGETS="sluice revproxy" bench/mcp/run.sh
#                                # three interleaved rounds, medians
#
# Environment: DURATION (10s), WARMUP (3s), SESSIONS (64), CONCURRENCY (64),
# WORKERS (sluice workers, 1), PIN (1: the proxy on CPU 1, load and upstream
# on CPU 0, or on every CPU but 1 when there are more; see README.md),
# UPSTREAM_ENV ("GOGC=off GOMEMLIMIT=128MiB"), UPSTREAM_FLAGS (none:
# stateful, JSON responses, raw tool handlers), LOAD_CLIENT (raw), BATCH (1:
# load under SCHED_BATCH), PROXY_CPU (unset: the proxy has all of CPU 1;
# 0.5: it has half of it, by a CFS quota in a cgroup of its own; needs root
# and the cpu controller), RATE (unset: load sends as fast as responses come
# back; N: N requests/s in all, paced, so every proxy is measured at the
# same offered load), ROUNDS (1: how many times each target runs, in turn;
# the table shows the medians and the goal line how many rounds pass on
# their own), TARGETS ("direct sluice cached revproxy gosdkproxy": the ones to run;
# nginx and haproxy, the two references, need those programs on PATH, e.g.
# apt-get install nginx-light haproxy).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/mcp/lib.sh
. bench/mcp/lib.sh

DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
SESSIONS=${SESSIONS:-64}
CONCURRENCY=${CONCURRENCY:-64}
WORKERS=${WORKERS:-1}
PIN=${PIN:-1}
# The upstream is the same for every target; these make it cheap per
# request so that it and load leave CPU 0 headroom (README.md).
UPSTREAM_ENV=${UPSTREAM_ENV-GOGC=off GOMEMLIMIT=128MiB}
UPSTREAM_FLAGS=${UPSTREAM_FLAGS-}
LOAD_CLIENT=${LOAD_CLIENT:-raw}
BATCH=${BATCH:-1}
PROXY_CPU=${PROXY_CPU:-}
RATE=${RATE:-}
ROUNDS=${ROUNDS:-1}
TARGETS=${TARGETS:-direct sluice cached revproxy gosdkproxy}
if ! [[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]]; then echo "ROUNDS must be a positive integer, not '$ROUNDS'" >&2; exit 2; fi
for t in $TARGETS; do
	case $t in direct | sluice | cached | revproxy | gosdkproxy | nginx | haproxy) ;; *) echo "TARGETS: unknown target '$t' (direct sluice cached revproxy gosdkproxy nginx haproxy)" >&2; exit 2 ;; esac
done
rate_args=()
if [ -n "$RATE" ]; then rate_args=(-rate "$RATE"); fi

tmp=$(mktemp -d)
pids=()
cgroup=""
cleanup() {
	stop_started
	if [ -n "$cgroup" ]; then rmdir "$cgroup" 2>/dev/null || true; fi
}
trap cleanup EXIT

hz=$(getconf CLK_TCK)
load_timeout=$(($(seconds "$WARMUP") + $(seconds "$DURATION") + 60))

pin_proxy=()
pin_load=()
# The harness (load and the upstream) gets every CPU but the proxy's: on 2
# CPUs that is CPU 0 alone, which a proxy faster than revproxy outruns
# (README.md); with 4 or more it can keep a one-worker Sluice saturated.
ncpu=$(nproc)
harness_cpus=""
if [ "$PIN" = 1 ] && command -v taskset >/dev/null && [ "$ncpu" -ge 2 ]; then
	harness_cpus=0
	pinning="proxy on CPU 1, load and upstream on CPU 0"
	if [ "$ncpu" -gt 2 ]; then
		harness_cpus="0,2-$((ncpu - 1))"
		pinning="proxy on CPU 1, load and upstream on CPUs $harness_cpus"
	fi
	pin_proxy=(taskset -c 1)
	pin_load=(taskset -c "$harness_cpus")
else
	pinning="not pinned"
fi
# PROXY_CPU: a cgroup whose CPU quota is that share of one CPU per 10 ms
# period (cgroup v1 cpu controller, or v2 with cpu enabled); each proxy
# joins it right after it starts.
if [ -n "$PROXY_CPU" ]; then
	quota_us=$(python3 -c 'import sys; print(max(1000, int(float(sys.argv[1]) * 10000)))' "$PROXY_CPU")
	if [ -d /sys/fs/cgroup/cpu ] && [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
		cgroup=/sys/fs/cgroup/cpu/sluice-bench-mcp-$$
		mkdir "$cgroup"
		echo 10000 >"$cgroup/cpu.cfs_period_us"
		echo "$quota_us" >"$cgroup/cpu.cfs_quota_us"
	elif grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
		cgroup=/sys/fs/cgroup/sluice-bench-mcp-$$
		mkdir "$cgroup"
		echo "$quota_us 10000" >"$cgroup/cpu.max"
	else
		echo "PROXY_CPU needs a cgroup cpu controller (v1 /sys/fs/cgroup/cpu, or v2 with cpu in subtree_control)" >&2
		exit 1
	fi
	pinning="$pinning, the proxy limited to $PROXY_CPU CPU ($quota_us µs per 10 ms)"
fi
# SCHED_BATCH: load's wakeups do not preempt the upstream on their shared
# CPU, so load handles responses in batches (README.md).
sched_load=()
if [ "$BATCH" = 1 ] && command -v chrt >/dev/null; then
	sched_load=(chrt -b 0)
fi

echo "building into $tmp"
go build -o "$tmp/" ./bench/mcp/upstream ./bench/mcp/load ./bench/mcp/revproxy ./bench/mcp/gosdkproxy
sluice_built=1
if ! go build -o "$tmp/sluice" ./cmd/sluice 2>"$tmp/sluice-build.log"; then
	sluice_built=0
	echo "sluice: build failed (it is reported as failed below):" >&2
	head -5 "$tmp/sluice-build.log" >&2
fi

port_up=$(free_port)
# shellcheck disable=SC2086 # UPSTREAM_ENV and UPSTREAM_FLAGS are word lists
env $UPSTREAM_ENV "${pin_load[@]}" "$tmp/upstream" -addr "127.0.0.1:$port_up" $UPSTREAM_FLAGS 2>"$tmp/upstream.log" &
up_pid=$!
pids+=("$up_pid")
wait_port "$port_up" "$up_pid" || { echo "upstream did not start:" >&2; cat "$tmp/upstream.log" >&2; exit 1; }
upstream_url="http://127.0.0.1:$port_up/mcp"

# load name url method extra-load-args... : one measured run, its JSON in
# $tmp/<name>.<method>.r<round>.json; failures leave a .err file instead.
load() {
	local name=$1 url=$2 method=$3
	shift 3
	local out="$tmp/$name.${method//\//_}.r$round.json"
	if ! timeout "$load_timeout" "${sched_load[@]}" "${pin_load[@]}" "$tmp/load" -client "$LOAD_CLIENT" -url "$url" -method "$method" \
		-sessions "$SESSIONS" -concurrency "$CONCURRENCY" -duration "$DURATION" -warmup "$WARMUP" \
		-clk-tck "$hz" -label "$name" -json "$out" -pid "upstream=$up_pid" "${rate_args[@]}" "$@" 2>"$tmp/load.err"; then
		{ echo "$name $method: load failed:"; cat "$tmp/load.err"; } >&2
		tail -1 "$tmp/load.err" >"${out%.json}.err"
		rm -f "$out"
	fi
}

# start_proxy name port cmd...: starts a proxy pinned to the proxy CPU; sets
# proxy_pid, or returns 1 if it does not listen.
start_proxy() {
	local name=$1 port=$2
	shift 2
	"${pin_proxy[@]}" "$@" >"$tmp/$name.log" 2>&1 &
	proxy_pid=$!
	pids+=("$proxy_pid")
	if [ -n "$cgroup" ]; then echo "$proxy_pid" >"$cgroup/cgroup.procs"; fi
	if ! wait_port "$port" "$proxy_pid"; then
		echo "$name did not start:" >&2
		tail -5 "$tmp/$name.log" >&2
		stop_pid "$proxy_pid"
		return 1
	fi
}

echo "tools/call echo and tools/list, $SESSIONS sessions, $CONCURRENCY workers, warmup $WARMUP, measured $DURATION, $pinning"
echo "upstream: ${UPSTREAM_ENV:-default GC} ${UPSTREAM_FLAGS:-(stateful, JSON, raw tools)}; load: -client $LOAD_CLIENT${sched_load:+, SCHED_BATCH}${RATE:+, paced at $RATE requests/s}"
echo "targets: $TARGETS; rounds: $ROUNDS (each round runs every target once, in turn)"

wants() { [[ " $TARGETS " == *" $1 "* ]]; }

# (a) direct.
run_direct() {
	load direct "$upstream_url" tools/call
	load direct "$upstream_url" tools/list -min-tools 2
}

# (b) sluice, one worker (-w), once per config.
run_sluice_config() { # config-file method min-tools [target]
	local port cfg name=${4:-sluice}
	port=$(free_port)
	cfg="$tmp/$(basename "$1")"
	sed -e "s/7201/$port/g" -e "s#http://127.0.0.1:7200/mcp#$upstream_url#" "$1" >"$cfg"
	if start_proxy "$name" "$port" "$tmp/sluice" start -c "$cfg" -w "$WORKERS" -e "$tmp/engine"; then
		load "$name" "http://127.0.0.1:$port/mcp" "$2" -min-tools "$3" -pid "proxy=$proxy_pid"
		stop_pid "$proxy_pid"
	else
		echo "sluice did not start (see above)" >"$tmp/$name.${2//\//_}.r$round.err"
	fi
}
run_sluice() {
	if [ "$sluice_built" = 1 ]; then
		run_sluice_config bench/mcp/gateway.yaml tools/call 1
		run_sluice_config bench/mcp/gateway-list.yaml tools/list 5
	else
		echo "build failed" >"$tmp/sluice.tools_call.r$round.err"
		echo "build failed" >"$tmp/sluice.tools_list.r$round.err"
	fi
}

# (b') sluice with the proxy's cache: tools/list only (a tools/call is
# not cached, and is the same as sluice's).
run_cached() {
	if [ "$sluice_built" = 1 ]; then
		run_sluice_config bench/mcp/gateway-list-cached.yaml tools/list 5 cached
	else
		echo "build failed" >"$tmp/cached.tools_list.r$round.err"
	fi
}

# run_go_proxy name upstream: one of the Go proxies built from bench/mcp,
# in front of upstream, for tools/call and tools/list.
run_go_proxy() {
	local name=$1 upstream=$2 port
	port=$(free_port)
	if start_proxy "$name" "$port" "$tmp/$name" -addr "127.0.0.1:$port" -upstream "$upstream"; then
		load "$name" "http://127.0.0.1:$port/mcp" tools/call -pid "proxy=$proxy_pid"
		load "$name" "http://127.0.0.1:$port/mcp" tools/list -min-tools 2 -pid "proxy=$proxy_pid"
		stop_pid "$proxy_pid"
	fi
}

# (c) httputil.ReverseProxy, which takes the upstream's origin.
run_revproxy() { run_go_proxy revproxy "http://127.0.0.1:$port_up"; }

# (d) go-sdk proxy, which takes the upstream's MCP endpoint.
run_gosdkproxy() { run_go_proxy gosdkproxy "$upstream_url"; }

# (e), (f) the C references: a config from bench/mcp/ref with this run's
# ports, the program from PATH; a missing program is a FAILED row.
run_ref() { # name config-file cmd...
	local name=$1 conf=$2 port dir
	shift 2
	if ! command -v "$1" >/dev/null; then
		echo "$1 is not installed (apt-get install nginx-light haproxy)" >"$tmp/$name.tools_call.r$round.err"
		echo "$1 is not installed" >"$tmp/$name.tools_list.r$round.err"
		return
	fi
	port=$(free_port)
	dir="$tmp/$name.d"
	mkdir -p "$dir"
	sed -e "s#@DIR@#$dir#g" -e "s#@PORT@#$port#g" -e "s#@UPSTREAM@#127.0.0.1:$port_up#g" "bench/mcp/ref/$conf" >"$dir/$conf"
	if start_proxy "$name" "$port" "$@" "$dir/$conf"; then
		load "$name" "http://127.0.0.1:$port/mcp" tools/call -pid "proxy=$proxy_pid"
		load "$name" "http://127.0.0.1:$port/mcp" tools/list -min-tools 2 -pid "proxy=$proxy_pid"
		stop_pid "$proxy_pid"
	else
		echo "$name did not start (see above)" >"$tmp/$name.tools_call.r$round.err"
	fi
}
run_nginx() { run_ref nginx nginx.conf nginx -e stderr -p "$tmp/nginx.d" -c; }
run_haproxy() { run_ref haproxy haproxy.cfg haproxy -db -f; }

# Rounds interleave the targets, so that a slow minute of a shared host
# falls on every target alike rather than on one.
for round in $(seq 1 "$ROUNDS"); do
	[ "$ROUNDS" -gt 1 ] && echo "round $round of $ROUNDS"
	for t in direct sluice cached revproxy gosdkproxy nginx haproxy; do
		if wants "$t"; then "run_$t"; fi
	done
done

python3 bench/mcp/report.py "$tmp" "$RATE" "$ROUNDS" "$TARGETS" "$harness_cpus"
