#!/usr/bin/env bash
# HTTP/1.1 echo benchmark: wrk with 64 connections against
#   (a) sluice start -c examples/http-echo.yaml with 1 worker, and
#   (b) Go's net/http answering the same body with GOMAXPROCS=1,
# in one run, on loopback. Reports requests/s and each server's CPU seconds
# (utime+stime from /proc) per 100k requests.
#
#   bench/http/run.sh            # 10 s per server
#   DURATION=30s bench/http/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
if ! command -v wrk >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		apt-get install -y -qq wrk >/dev/null
	else
		echo "bench/http: wrk is needed (apt-get install wrk)" >&2
		exit 1
	fi
fi

tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/sluice" ./cmd/sluice
go build -o "$tmp/netserver" ./bench/http/netserver

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
wait_port() {
	for _ in $(seq 1 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.05
	done
	echo "port $1 did not open" >&2
	return 1
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

run() { # name pid port
	local name=$1 pid=$2 port=$3
	wait_port "$port"
	# Warm up, then measure.
	wrk -t"$THREADS" -c"$CONNECTIONS" -d2s -s bench/http/post.lua "http://127.0.0.1:$port/" >/dev/null
	local before after out rps reqs
	before=$(cpu_ticks "$pid")
	out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s bench/http/post.lua "http://127.0.0.1:$port/")
	after=$(cpu_ticks "$pid")
	rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
	reqs=$(echo "$out" | awk '/requests in/ {print $1}')
	if echo "$out" | grep -q "Non-2xx\|Socket errors"; then echo "$out" | grep "Non-2xx\|Socket errors" >&2; fi
	awk -v n="$name" -v r="$rps" -v q="$reqs" -v t=$((after - before)) -v hz="$hz" \
		'BEGIN { printf "%-22s %12.0f req/s %10.3f CPU s per 100k requests\n", n, r, (t / hz) / q * 100000 }'
}

port_a=$(free_port)
sed "s/port: 8080/port: $port_a/" examples/http-echo.yaml >"$tmp/http-echo.yaml"
"$tmp/sluice" start -c "$tmp/http-echo.yaml" -w 1 -e "$tmp/engine" >"$tmp/sluice.log" 2>&1 &
pids+=($!)
sluice_pid=$!

port_b=$(free_port)
GOMAXPROCS=1 "$tmp/netserver" -addr "127.0.0.1:$port_b" &
pids+=($!)
net_pid=$!

echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION, POST 5-byte body, echo reply"
run "sluice (1 worker)" "$sluice_pid" "$port_a"
run "net/http (GOMAXPROCS=1)" "$net_pid" "$port_b"
