package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// conformance runs the official suite's server mode against url: the
// suite in .peers (0.1.16) or .peers/next (0.2.0-alpha.12), with extra
// arguments and an optional baseline of expected failures. The suite exits
// non-zero on an unexpected failure and on a baseline entry that passes.
func conformance(t *testing.T, next bool, url, baseline string, args ...string) {
	t.Helper()
	dir, node := peers(t)
	if next {
		dir = filepath.Join(dir, "next")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cli := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	argv := append([]string{cli, "server", "--url", url, "-o", t.TempDir()}, args...)
	if baseline != "" {
		abs, err := filepath.Abs(filepath.Join("testdata", baseline))
		require.NoError(t, err)
		argv = append(argv, "--expected-failures", abs)
	}
	cmd := exec.CommandContext(ctx, node, argv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Log(out.String())
	require.NoError(t, err, "conformance: unexpected failures or a stale baseline (see the log)")
}

// TestConformanceThroughGateway runs the conformance suite against go-sdk's
// everything-server twice in one run: directly, and through the gateway
// (mcp server → proxy with prefix never and one route → mcp client →
// the same server), with 0.1.16 and with 0.2.0-alpha.12 at the 2025 spec
// versions (stateful upstream) and at 2026-07-28 (stateless upstream).
// Every scenario that passes directly passes through the gateway,
// server-to-client requests included.
func TestConformanceThroughGateway(t *testing.T) {
	t.Run("0.1.16", func(t *testing.T) {
		up := startGoEverything(t, 0, false)
		conformance(t, false, up.URL, "")
		port := freePort(t)
		gw := startGateway(t, gatewayConfig(port, "never", gatewayRoute{Toolkit: "everything", Upstream: up.URL}), port, 2)
		conformance(t, false, gw, "conformance-gateway-baseline.yml")
	})
	for _, version := range []string{"2025-11-25", "2025-06-18"} {
		t.Run("0.2.0-alpha.12/"+version, func(t *testing.T) {
			up := startGoEverything(t, 0, false)
			conformance(t, true, up.URL, "", "--spec-version", version)
			port := freePort(t)
			gw := startGateway(t, gatewayConfig(port, "never", gatewayRoute{Toolkit: "everything", Upstream: up.URL}), port, 2)
			conformance(t, true, gw, "conformance-gateway-baseline.yml", "--spec-version", version)
		})
	}
	// A 2025-era client and a dual-version upstream (2026-07-28 and
	// 2025-11-25): the gateway's client kind discovers 2026-07-28 and,
	// since this upstream keeps no 2025 session (no session id), uses it
	// at 2026-07-28 for the 2025 sessions too, keeping the era's
	// session-scoped methods (logging/setLevel, resources/subscribe)
	// working.
	t.Run("0.2.0-alpha.12/2025-11-25/dual-version-upstream", func(t *testing.T) {
		up := startGoEverything(t, 0, true)
		conformance(t, true, up.URL, "conformance-dual-direct-baseline.yml", "--spec-version", "2025-11-25")
		port := freePort(t)
		gw := startGateway(t, gatewayConfig(port, "never", gatewayRoute{Toolkit: "everything", Upstream: up.URL, Versions: "[2026-07-28, 2025-11-25]"}), port, 2)
		conformance(t, true, gw, "conformance-dual-baseline.yml", "--spec-version", "2025-11-25")
		conformance(t, false, up.URL, "conformance-dual-direct-baseline.yml")
		conformance(t, false, gw, "conformance-dual-baseline.yml")
	})
	// A 2025-era client and an upstream of the 2026-07-28 era only (the
	// client kind offers nothing else): no direct run is possible, so the
	// baseline says what the gateway does not yet bridge.
	t.Run("0.2.0-alpha.12/2025-11-25/2026-only-upstream", func(t *testing.T) {
		up := startGoEverything(t, 0, true)
		port := freePort(t)
		gw := startGateway(t, gatewayConfig(port, "never", gatewayRoute{Toolkit: "everything", Upstream: up.URL, Versions: "[2026-07-28]"}), port, 2)
		conformance(t, true, gw, "conformance-2026only-baseline.yml", "--spec-version", "2025-11-25")
		conformance(t, false, gw, "conformance-2026only-baseline.yml")
	})
	t.Run("0.2.0-alpha.12/2026-07-28", func(t *testing.T) {
		up := startGoEverything(t, 0, true)
		conformance(t, true, up.URL, "", "--requirements", "2026-07-28")
		port := freePort(t)
		gw := startGateway(t, gatewayConfig(port, "never", gatewayRoute{Toolkit: "everything", Upstream: up.URL, Versions: "[2026-07-28, 2025-11-25]"}), port, 2)
		conformance(t, true, gw, "conformance-gateway-2026-baseline.yml", "--requirements", "2026-07-28")
	})
	t.Run("0.2.0-alpha.12/2026-07-28-to-2025", func(t *testing.T) {
		// A 2026-07-28 client through the gateway to a stateful upstream
		// that speaks 2025 only: the gateway turns the upstream's requests
		// to its client into input_required rounds (the reverse bridge).
		up := startGoEverything(t, 0, false)
		port := freePort(t)
		gw := startGateway(t, gatewayConfig(port, "never", gatewayRoute{Toolkit: "everything", Upstream: up.URL, Versions: "[2026-07-28, 2025-11-25]"}), port, 2)
		conformance(t, true, gw, "conformance-gateway-reverse-baseline.yml", "--requirements", "2026-07-28")
	})
}
