#!/usr/bin/env bash
# Writes cmd/sluice/default.pgo, the CPU profile Go's profile-guided
# optimization builds sluice with (go build picks up default.pgo in the
# main package's directory): sluice serving bench/mcp's gateway for
# tools/call (gateway.yaml) and for the merged tools/list
# (gateway-list.yaml), under the same upstream and load as run.sh, the two
# profiles merged. `make pgo` runs it; rerun it when the hot path changes
# much, and compare with bench/mcp/instr.sh before committing the result.
#
# Environment: DURATION (90s per config), SESSIONS (64). Needs Go and python3.
# The profile samples at 100 Hz: a longer run gives the compiler more of the
# cooler call sites as hot, and more of them inlined. At 1ffe461, 20 s per
# config built a sluice running 105,882 instructions per tools/call, 90 s
# one running 103,539.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/mcp/lib.sh
. bench/mcp/lib.sh

DURATION=${DURATION:-90s}
SESSIONS=${SESSIONS:-64}

# load runs for its 2 s warmup and DURATION; it gets a minute more.
load_timeout=$(($(seconds "$DURATION") + 62))
tmp=$(mktemp -d)
pids=()
trap 'stop_started 10' EXIT # sluice writes its profile as it exits

# Built without a profile, so that the new one does not depend on the old.
go build -o "$tmp/" ./bench/mcp/upstream ./bench/mcp/load
go build -pgo=off -o "$tmp/sluice" ./cmd/sluice

port_up=$(free_port)
GOGC=off GOMEMLIMIT=128MiB "$tmp/upstream" -addr "127.0.0.1:$port_up" 2>"$tmp/upstream.log" &
pids+=($!)
wait_port "$port_up" "$!" || { echo "upstream did not start:" >&2; cat "$tmp/upstream.log" >&2; exit 1; }

profiles=()
for spec in gateway.yaml:tools/call:1 gateway-list.yaml:tools/list:5; do
	IFS=: read -r config method min_tools <<<"$spec"
	port=$(free_port)
	sed -e "s/7201/$port/g" -e "s#http://127.0.0.1:7200/mcp#http://127.0.0.1:$port_up/mcp#" "bench/mcp/$config" >"$tmp/$config"
	"$tmp/sluice" start -c "$tmp/$config" -w 1 -e "$tmp/engine" --cpuprofile "$tmp/$config.prof" >"$tmp/sluice.log" 2>&1 &
	sluice_pid=$!
	pids+=("$sluice_pid")
	wait_port "$port" "$sluice_pid" || { echo "sluice did not start:" >&2; tail -5 "$tmp/sluice.log" >&2; exit 1; }
	timeout "$load_timeout" "$tmp/load" -client raw -url "http://127.0.0.1:$port/mcp" -method "$method" -min-tools "$min_tools" \
		-sessions "$SESSIONS" -concurrency "$SESSIONS" -duration "$DURATION" -warmup 2s | grep -v '^{'
	stop_pid "$sluice_pid" TERM 10 # sluice writes its profile as it exits
	[ -s "$tmp/$config.prof" ] || { echo "sluice wrote no profile for $config" >&2; exit 1; }
	profiles+=("$tmp/$config.prof")
done
go tool pprof -proto "${profiles[@]}" >"$tmp/merged.pgo" 2>/dev/null
mv "$tmp/merged.pgo" cmd/sluice/default.pgo
echo "wrote cmd/sluice/default.pgo ($(wc -c <cmd/sluice/default.pgo) bytes)"
