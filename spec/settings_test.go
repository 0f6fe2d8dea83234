package spec

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSettingNeedsEngine: engine settings belong to an engine-driven run;
// the engine refuses a name no binding declares.
func TestSettingNeedsEngine(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	src := source(t, "client.rpt", "connect \"zilla://streams/app0\"\nconnected\n")
	err := PlaySources(ctx, PeerToPeer(Setting("mcp.session.id", "x")), src)
	assert.EqualError(t, err, "spec: engine settings apply only to a run against an engine (Config)")

	err = PlaySources(ctx, Config(echoConfig, Setting("no.such.setting", "1")), src)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `engine: unknown setting "no.such.setting"`)
}
