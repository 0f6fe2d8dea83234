package client_test

import (
	"context"
	"log/slog"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// records is a slog.Handler that passes each warning on to a channel.
type records chan slog.Record

func (c records) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (c records) Handle(_ context.Context, r slog.Record) error {
	select {
	case c <- r.Clone():
	default:
	}
	return nil
}
func (c records) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c records) WithGroup(string) slog.Handler      { return c }

// TestStartWarnsUnreachableUpstream starts a client whose upstream's port
// refuses connections: the start logs a warning naming the binding, the
// server and the error.
func TestStartWarnsUnreachableUpstream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	warnings := make(records, 16)
	enginetest.Start(t, "client.yaml", "name: test\nbindings:\n  client0:\n    type: mcp\n    kind: client\n    options:\n      server: http://"+addr+"/mcp\n",
		engine.WithLogger(slog.New(warnings)))
	for {
		r := enginetest.Receive(t, warnings, "the unreachable upstream's warning")
		attrs := map[string]string{}
		r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
		if attrs["server"] == "" {
			continue // another warning
		}
		assert.Contains(t, r.Message, "the upstream cannot be reached")
		assert.Equal(t, "client0", attrs["binding"])
		assert.Equal(t, "http://"+addr+"/mcp", attrs["server"])
		assert.Contains(t, attrs["error"], "refused")
		return
	}
}
