#!/usr/bin/env bash
# Instructions (and, with CACHE=1, simulated cache misses) per MCP request
# through the Sluice gateway, counted by valgrind's callgrind: the same
# upstream, load and gateway.yaml as run.sh, but a count rather than a
# timing, so it repeats to within a fraction of a percent where run.sh's CPU
# per request moves by ±20 % on a shared host. Use it to compare two
# commits' hot paths (README.md, "Counting instructions").
#
#   bench/mcp/instr.sh                     # 2,000 tools/calls, 8 in flight
#   CACHE=1 bench/mcp/instr.sh             # also L1/LL misses (much slower start)
#   METHOD=tools/list bench/mcp/instr.sh   # gateway-list.yaml, two routes merged
#   METHOD=tools/list CONFIG=gateway-list-cached.yaml bench/mcp/instr.sh   # the list from the proxy's cache
#   SYSCALLS=1 METHOD=tools/list CONFIG=gateway-list-cached.yaml bench/mcp/instr.sh   # system calls, not instructions
#   SLUICE=/path/to/sluice bench/mcp/instr.sh   # a prebuilt binary
#   CACHE=1 LL=524288,8,64 SESSIONS=64 bench/mcp/instr.sh   # misses of a 512 KiB L2
#
# Environment: REQUESTS (2000), SESSIONS (8, also the requests in flight),
# METHOD (tools/call), CONFIG (unset: gateway.yaml for tools/call,
# gateway-list.yaml for tools/list; a file of bench/mcp or a path), CACHE (0),
# LL (unset), SLUICE (unset: build ./cmd/sluice), OUT (unset: the callgrind
# file is removed; a path keeps it for callgrind_annotate), SYSCALLS (0).
# Needs valgrind (callgrind_control), python3 and Go; SYSCALLS=1 needs strace
# instead of valgrind. Only the measured requests are counted:
# instrumentation (or strace, attached to the running sluice) is switched on
# after the gateway has started and served a warmup of 200 requests, and
# off before it stops.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/mcp/lib.sh
. bench/mcp/lib.sh

REQUESTS=${REQUESTS:-2000}
SESSIONS=${SESSIONS:-8}
METHOD=${METHOD:-tools/call}
CACHE=${CACHE:-0}
SLUICE=${SLUICE:-}
OUT=${OUT:-}
CONFIG=${CONFIG:-}
SYSCALLS=${SYSCALLS:-0}
case $METHOD in
tools/call) config=bench/mcp/gateway.yaml min_tools=1 ;;
tools/list) config=bench/mcp/gateway-list.yaml min_tools=5 ;;
*) echo "METHOD must be tools/call or tools/list, not '$METHOD'" >&2; exit 2 ;;
esac
if [ -n "$CONFIG" ]; then
	config=$CONFIG
	[ -f "$config" ] || config=bench/mcp/$CONFIG
	[ -f "$config" ] || { echo "CONFIG: no file '$CONFIG' (here or in bench/mcp)" >&2; exit 2; }
fi
tools=(valgrind callgrind_control callgrind_annotate python3)
if [ "$SYSCALLS" = 1 ]; then tools=(strace python3); fi
for tool in "${tools[@]}"; do
	command -v "$tool" >/dev/null || { echo "$tool is needed (apt-get install valgrind strace python3)" >&2; exit 2; }
done

tmp=$(mktemp -d)
pids=()
trap 'stop_started 60' EXIT # callgrind writes its file as sluice exits

go build -o "$tmp/" ./bench/mcp/upstream ./bench/mcp/load
if [ -z "$SLUICE" ]; then
	go build -o "$tmp/sluice" ./cmd/sluice
	SLUICE=$tmp/sluice
fi

port_up=$(free_port)
GOGC=off GOMEMLIMIT=128MiB "$tmp/upstream" -addr "127.0.0.1:$port_up" 2>"$tmp/upstream.log" &
pids+=($!)
wait_port "$port_up" "$!" 10 || { echo "upstream did not start:" >&2; cat "$tmp/upstream.log" >&2; exit 1; }

port=$(free_port)
sed -e "s/7201/$port/g" -e "s#http://127.0.0.1:7200/mcp#http://127.0.0.1:$port_up/mcp#" "$config" >"$tmp/gateway.yaml"
load() { # requests
	timeout 600 "$tmp/load" -client raw -url "http://127.0.0.1:$port/mcp" -method "$METHOD" -min-tools "$min_tools" \
		-sessions "$SESSIONS" -concurrency "$SESSIONS" -requests "$1" -warmup 0s -timeout 120s -json "$tmp/load.json" \
		2>"$tmp/load.err" >/dev/null || { echo "load failed:" >&2; cat "$tmp/load.err" >&2; exit 1; }
}

if [ "$SYSCALLS" = 1 ]; then
	# The system calls of the measured requests: strace -c attached to
	# every thread of a running sluice (not under valgrind) while they
	# run. strace slows each call down, so the count is the result, not
	# the time.
	"$SLUICE" start -c "$tmp/gateway.yaml" -w 1 -e "$tmp/engine" >"$tmp/sluice.log" 2>&1 &
	sluice_pid=$!
	pids+=("$sluice_pid")
	wait_port "$port" "$sluice_pid" 30 || { echo "sluice did not start:" >&2; tail -5 "$tmp/sluice.log" >&2; exit 1; }
	load 200
	strace -c -f -q -o "$tmp/strace.txt" -p "$sluice_pid" 2>"$tmp/strace.err" &
	strace_pid=$!
	pids=("$strace_pid" "${pids[@]}")
	# strace attaches to the threads one by one before it traces; a
	# second is ample for sluice's handful.
	sleep 1
	load "$REQUESTS"
	stop_pid "$strace_pid" INT 10
	python3 - "$tmp/strace.txt" "$tmp/load.json" "$REQUESTS" "$METHOD" "$SESSIONS" "$config" <<'EOF'
import json, sys
path, load_json, requests, method, sessions, config = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
with open(load_json) as f:
    rep = json.load(f)
if rep.get("errors"):
    sys.exit(f"load reported {rep['errors']} errors: the count would not be of {requests} good requests")
rows, total = [], None
for line in open(path):
    parts = line.split()
    # % time, seconds, usecs/call, calls, [errors], syscall
    if len(parts) < 5 or not parts[3].isdigit():
        continue
    calls, name = int(parts[3]), parts[-1]
    errors = int(parts[4]) if len(parts) == 6 else 0
    if name == "total":
        total = calls
    else:
        rows.append((calls, errors, name))
if total is None:
    sys.exit("no total in strace's summary")
print(f"{method}: {requests} requests, {sessions} in flight, through {config} (one worker), system calls of sluice")
print(f"per request: {total / requests:.2f}")
print()
print(f"{'system call':<20} {'per request':>12} {'errors':>8}")
for calls, errors, name in sorted(rows, key=lambda r: -r[0]):
    print(f"{name:<20} {calls / requests:>12.3f} {errors / requests:>8.3f}")
EOF
	exit 0
fi

sim=()
if [ "$CACHE" = 1 ]; then
	# LL (unset: the host's last level) sizes the simulated last-level
	# cache, "size,assoc,line": LL=524288,8,64 models a 512 KiB per-core L2
	# rather than a 32 MiB L3 no gateway working set outgrows.
	sim=(--cache-sim=yes ${LL:+--LL=$LL})
fi
# asyncpreemptoff: callgrind 3.19 crashes when instrumentation is switched
# on while the runtime's preemption signals come. With it off, sluice parks
# its worker through the scheduler (rawio.EpollWaitScheduled: a parked
# worker holding its P would hold up every garbage collection, and a
# collection during the start kept sluice from ever listening), a few
# hundred instructions per wait more than the signal-preemptible wait the
# default runtime uses. --fair-sched: with valgrind's default lock the Go
# runtime's spinning threads could starve the others.
GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --fair-sched=yes --instr-atstart=no "${sim[@]}" \
	--callgrind-out-file="$tmp/callgrind.out" "$SLUICE" start -c "$tmp/gateway.yaml" -w 1 -e "$tmp/engine" \
	>"$tmp/sluice.log" 2>&1 &
sluice_pid=$!
pids+=("$sluice_pid")
# Under valgrind the start (the configuration schema above all) takes tens
# of seconds, minutes with the cache simulation.
wait_port "$port" "$sluice_pid" 600 || { echo "sluice did not start under valgrind:" >&2; tail -5 "$tmp/sluice.log" >&2; exit 1; }

load 200
callgrind_control -i on "$sluice_pid" >/dev/null
load "$REQUESTS"
callgrind_control -i off "$sluice_pid" >/dev/null
stop_pid "$sluice_pid" INT 60 # callgrind writes its file as sluice exits
[ -s "$tmp/callgrind.out" ] || { echo "callgrind wrote no profile:" >&2; tail -5 "$tmp/sluice.log" >&2; exit 1; }
if [ -n "$OUT" ]; then cp "$tmp/callgrind.out" "$OUT"; fi

callgrind_annotate --auto=no --threshold=100 "$tmp/callgrind.out" >"$tmp/annotate.txt"
python3 - "$tmp/annotate.txt" "$tmp/load.json" "$REQUESTS" "$METHOD" "$SESSIONS" "$config" <<'EOF'
import json, re, sys
annotate, load_json, requests, method, sessions, config = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
with open(load_json) as f:
    rep = json.load(f)
if rep.get("errors"):
    sys.exit(f"load reported {rep['errors']} errors: the count would not be of {requests} good requests")
events, totals, rows = None, None, []
# A count, with its share when annotate prints one; "." is a zero.
num = re.compile(r"^\s*([0-9,]+|\.)(?:\s+\(\s*[0-9.]+%\))?(?=\s)")
for line in open(annotate):
    if line.startswith("Events shown:"):
        events = line.split(":", 1)[1].split()
        continue
    if events is None or not line.strip() or line.startswith("-"):
        continue
    vals, rest = [], line
    for _ in events:
        m = num.match(rest)
        if not m:
            break
        vals.append(0 if m.group(1) == "." else int(m.group(1).replace(",", "")))
        rest = rest[m.end():]
    if len(vals) != len(events):
        continue
    name = rest.strip()
    if name.startswith("PROGRAM TOTALS"):
        totals = vals
    else:
        rows.append((vals, name.split(":", 1)[-1].split(" [")[0]))
if totals is None:
    sys.exit("no totals in callgrind_annotate's output")
def group(fn):
    """The package a function belongs to, short: engine, binding/http, runtime, ..."""
    fn = fn.replace("github.com/sluicehq/sluice/", "")
    m = re.match(r"^((?:[\w.-]+/)*[\w-]+)\.", fn)
    pkg = m.group(1) if m else fn
    if pkg.startswith(("runtime", "internal", "sync", "syscall", "time")):
        return "Go runtime and std"
    return pkg
by = {}
for vals, fn in rows:
    g = by.setdefault(group(fn), [0] * len(events))
    for i, v in enumerate(vals):
        g[i] += v
per = lambda v: v / requests
print(f"{method}: {requests} requests, {sessions} in flight, through {config} (one worker)")
print("per request: " + ", ".join(f"{e} {per(v):,.0f}" for e, v in zip(events, totals)))
print()
print(f"{'package (exclusive)':<34} " + " ".join(f"{e:>9}" for e in events))
for name, vals in sorted(by.items(), key=lambda kv: -kv[1][0]):
    if vals[0] < totals[0] * 0.005:
        continue
    print(f"{name:<34} " + " ".join(f"{per(v):>9,.0f}" for v in vals))
EOF
