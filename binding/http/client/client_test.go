package client_test

import (
	"path/filepath"
	"testing"

	_ "github.com/sluicehq/sluice/binding/http/client"
	_ "github.com/sluicehq/sluice/binding/http/server"
	_ "github.com/sluicehq/sluice/binding/tcp"
	"github.com/sluicehq/sluice/spec"
)

// scripts is the http scenario library, which the server kind's tests
// play too.
var scripts = filepath.Join("..", "..", "..", "scripts", "http")

// clientScenarios are the scenarios the client kind plays: the application
// client script drives app0, the http client, and the network server
// script plays the connection it opens. (The malformed-request scenarios
// and those about how a server reads requests are the server kind's.)
var clientScenarios = []string{
	"request.with.content.length", "request.with.chunked.body", "response.chunked", "keep.alive.two.requests",
	"head.request", "sse.response", "flow.control.small.window", "response.small.window", "request.large.body",
	"app.abort.response", "client.abort.mid.body", "expect.continue", "response.upgrade.required",
}

func TestClientEngineDriven(t *testing.T) {
	for _, name := range clientScenarios {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// One worker: the pool of connections is per worker.
			spec.Run(t, spec.Config(filepath.Join(scripts, "config", "client.yaml"), spec.Workers(1)),
				filepath.Join(scripts, "streams", "application", name, "client"),
				filepath.Join(scripts, "streams", "network", name, "server"))
		})
	}
}

// TestClientRoutes plays the client scenarios with the client's exit on a
// route (Zilla's config shape) rather than on the binding, and a request
// that no route matches, which the client refuses.
func TestClientRoutes(t *testing.T) {
	cfg := filepath.Join(scripts, "config", "client.routes.yaml")
	for _, name := range clientScenarios {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			spec.Run(t, spec.Config(cfg, spec.Workers(1)),
				filepath.Join(scripts, "streams", "application", name, "client"),
				filepath.Join(scripts, "streams", "network", name, "server"))
		})
	}
	t.Run("client.no.route", func(t *testing.T) {
		t.Parallel()
		spec.Run(t, spec.Config(cfg, spec.Workers(1), spec.External("net0")),
			filepath.Join(scripts, "streams", "application", "client.no.route", "client"))
	})
}

// TestClientInjectsCredentials: with options.authorization, a request on
// an authorized session goes out with the guard's credentials for it in
// the configured header and query parameter, on a connection that
// carries the session.
func TestClientInjectsCredentials(t *testing.T) {
	// The scenario is the client kind's alone (the server kind would see
	// other requests), so it sits apart from the shared library.
	spec.Run(t, spec.Config(filepath.Join(scripts, "config", "client.inject.credentials.yaml"), spec.Workers(1)),
		filepath.Join(scripts, "streams", "client", "application", "inject.credentials", "client"),
		filepath.Join(scripts, "streams", "client", "network", "inject.credentials", "server"))
}
