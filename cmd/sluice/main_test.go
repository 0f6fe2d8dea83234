package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")
	present := filepath.Join(dir, "sluice.yaml")
	require.NoError(t, os.WriteFile(present, []byte("name: test\nbindings: {}\n"), 0o644))

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string // exact, unless prefix
		wantStderr string // substring; "" means stderr must be empty
		prefix     bool   // wantStdout is a prefix of stdout
	}{
		{
			name:       "no args",
			args:       nil,
			wantCode:   exitOK,
			wantStdout: usage,
		},
		{
			name:       "help",
			args:       []string{"help"},
			wantCode:   exitOK,
			wantStdout: usage,
		},
		{
			name:       "version",
			args:       []string{"version"},
			wantCode:   exitOK,
			wantStdout: "sluice ",
			prefix:     true,
		},
		{
			name:       "version extra argument",
			args:       []string{"version", "x"},
			wantCode:   exitUsage,
			wantStderr: "usage: sluice version",
		},
		{
			name:       "start --set unknown setting",
			args:       []string{"start", "-c", present, "--set", "mcp.nope=1"},
			wantCode:   exitUsage,
			wantStderr: `unknown setting "mcp.nope"`,
		},
		{
			name:       "start --set bad value",
			args:       []string{"start", "-c", present, "--set", "mcp.lease.ttl=soon"},
			wantCode:   exitUsage,
			wantStderr: "mcp.lease.ttl",
		},
		{
			name:       "start --set without =",
			args:       []string{"start", "-c", present, "--set", "mcp.lease.ttl"},
			wantCode:   exitUsage,
			wantStderr: `-set "mcp.lease.ttl": want name=value`,
		},
		{
			name:       "start -c missing file",
			args:       []string{"start", "-c", missing},
			wantCode:   exitUsage,
			wantStderr: "sluice: open " + missing + ": no such file or directory\n",
		},
		{
			name:       "validate default",
			args:       []string{"validate"},
			wantCode:   exitOK,
			wantStdout: "sluice.yaml (embedded): valid (4 bindings)\n",
		},
		{
			name:       "validate file",
			args:       []string{"validate", "-c", present},
			wantCode:   exitOK,
			wantStdout: present + ": valid (0 bindings)\n",
		},
		{
			name:       "validate missing file",
			args:       []string{"validate", "--config", missing},
			wantCode:   exitUsage,
			wantStderr: "no such file or directory",
		},
		{
			name:       "start zero workers",
			args:       []string{"start", "-w", "0"},
			wantCode:   exitUsage,
			wantStderr: "-workers must be between 1 and 128, got 0",
		},
		{
			name:       "start negative idle spin",
			args:       []string{"start", "--idle-spin", "-1ms"},
			wantCode:   exitUsage,
			wantStderr: "-idle-spin must be between 0 and 1s, got -1ms",
		},
		{
			name:       "start bad idle spin",
			args:       []string{"start", "--idle-spin", "soon"},
			wantCode:   exitUsage,
			wantStderr: `invalid value "soon" for flag -idle-spin`,
		},
		{
			name:       "start extra argument",
			args:       []string{"start", "extra"},
			wantCode:   exitUsage,
			wantStderr: `unexpected argument "extra"`,
		},
		{
			name:       "start help",
			args:       []string{"start", "-h"},
			wantCode:   exitOK,
			wantStderr: "usage: sluice start",
		},
		{
			name:       "unknown command",
			args:       []string{"frobnicate"},
			wantCode:   exitUsage,
			wantStderr: `sluice: unknown command "frobnicate"` + "\n\n" + usage,
		},
		{
			name:       "bad flag",
			args:       []string{"start", "--bogus"},
			wantCode:   exitUsage,
			wantStderr: "flag provided but not defined: -bogus",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)

			assert.Equal(t, tt.wantCode, code)
			if tt.prefix {
				assert.Regexp(t, `^`+tt.wantStdout+`\S+\n$`, stdout.String())
			} else {
				assert.Equal(t, tt.wantStdout, stdout.String())
			}
			if tt.wantStderr == "" {
				assert.Empty(t, stderr.String())
			} else {
				assert.Contains(t, stderr.String(), tt.wantStderr)
			}
		})
	}
}

func TestLoadConfigDefault(t *testing.T) {
	cfg, err := loadConfig("")
	require.NoError(t, err)
	assert.Equal(t, embeddedSource, cfg.File)
	assert.Equal(t, "sluice", cfg.Name)
	// tcp → http → mcp server → toolkit.
	var chain []string
	for _, b := range cfg.Bindings {
		chain = append(chain, b.Name+":"+b.Type+"/"+b.Kind+"→"+b.Exit)
	}
	assert.Equal(t, []string{"tcp0:tcp/server→http0", "http0:http/server→", "mcp0:mcp/server→toolkit0",
		"toolkit0:toolkit/server→"}, chain)
	require.Len(t, cfg.Binding("http0").Routes, 1)
	assert.Equal(t, "mcp0", cfg.Binding("http0").Routes[0].Exit)
}

func TestVersion(t *testing.T) {
	tests := []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{name: "no build info", info: nil, ok: false, want: "devel"},
		{name: "empty version", info: &debug.BuildInfo{}, ok: true, want: "devel"},
		{name: "devel placeholder", info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, ok: true, want: "devel"},
		{name: "tagged", info: &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}}, ok: true, want: "v0.3.1"},
		{
			name: "pseudo-version",
			info: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260101000000-abcdef123456"}},
			ok:   true,
			want: "v0.0.0-20260101000000-abcdef123456",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, version(tt.info, tt.ok))
		})
	}
}

func TestSpecCommand(t *testing.T) {
	var out, errb bytes.Buffer
	dir := filepath.Join("..", "..", "scripts", "engine", "streams", "application", "data.captured")
	code := run([]string{"spec", filepath.Join(dir, "client"), filepath.Join(dir, "server")}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	assert.Contains(t, out.String(), "ok   ")
	assert.Contains(t, out.String(), "(peer to peer,")

	out.Reset()
	errb.Reset()
	cfg := filepath.Join("..", "..", "scripts", "engine", "config", "proxy.yaml")
	code = run([]string{"spec", "-c", cfg, "-p", "serverAddress=zilla://streams/app1",
		filepath.Join(dir, "client"), filepath.Join(dir, "server")}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	assert.Contains(t, out.String(), "(against "+cfg)

	out.Reset()
	errb.Reset()
	other := filepath.Join("..", "..", "scripts", "engine", "streams", "application", "abort.reply", "server")
	code = run([]string{"spec", "-t", "2s", filepath.Join(dir, "client"), other}, &out, &errb)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errb.String(), "FAIL ")
	// The two scripts run at once and each meets the other's bytes: the
	// client reads "partial" where it wants "world", the server reads the
	// client's data where it wants the close. Whichever peer reads first
	// reports its line; both are the mismatch, named precisely.
	clientSide := strings.Contains(errb.String(), "data.captured/client.rpt:12: expected DATA \"world\", observed DATA \"parti\"")
	serverSide := strings.Contains(errb.String(), "abort.reply/server.rpt:13: expected END, observed DATA")
	assert.True(t, clientSide || serverSide, "the mismatch with its script line, from either peer:\n%s", errb.String())

	errb.Reset()
	assert.Equal(t, exitUsage, run([]string{"spec"}, &out, &errb))
	assert.Contains(t, errb.String(), "no scripts given")
	errb.Reset()
	assert.Equal(t, exitUsage, run([]string{"spec", "-c", cfg, "--live", "x"}, &out, &errb))
}

// TestSpecSettings: --set fixes the engine settings a scenario expects,
// and refuses what the engine would not take before running anything.
func TestSpecSettings(t *testing.T) {
	const fixed = "5ca1ab1e-c0de-4a11-b0a7-000100000000"
	lib := filepath.Join("..", "..", "scripts", "mcp")
	cfg := filepath.Join(lib, "config", "server.settings.yaml")
	scripts := []string{filepath.Join(lib, "streams", "network", "session.fixed", "client"),
		filepath.Join(lib, "streams", "application", "session.fixed", "server")}
	var out, errb bytes.Buffer
	code := run(append([]string{"spec", "-c", cfg, "--set", "zilla.binding.mcp.session.id=" + fixed,
		"--set", "mcp.server.name=zilla", "-p", "sessionId=" + fixed, "-p", "serverName=zilla"}, scripts...), &out, &errb)
	require.Equal(t, exitOK, code, errb.String())

	errb.Reset()
	code = run(append([]string{"spec", "-c", cfg, "--set", "mcp.session.id=session-1",
		"--set", "zilla.binding.mcp.elicitation.id=elicit-1"}, scripts...), &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	assert.Contains(t, errb.String(), "sluice spec: note: setting mcp.elicitation.id is accepted but not read: ")

	for _, tt := range []struct{ args, want string }{
		{"-c " + cfg + " --set mcp.sesion.id=x", `engine: unknown setting "mcp.sesion.id" (known: `},
		{"-c " + cfg + " --set mcp.session.id", `-set "mcp.session.id": want name=value`},
		{"-c " + cfg + " --set mcp.inactivity.timeout=soon", `engine: setting mcp.inactivity.timeout="soon": want a positive duration`},
		{"--set mcp.session.id=x", "-set needs -config"},
	} {
		errb.Reset()
		assert.Equal(t, exitUsage, run(append(append([]string{"spec"}, strings.Fields(tt.args)...), scripts...), &out, &errb), tt.args)
		assert.Contains(t, errb.String(), tt.want, tt.args)
	}
}

// TestSpecNotify plays a pair whose client awaits a barrier only the
// command line notifies: with --notify it completes, without it times out.
func TestSpecNotify(t *testing.T) {
	dir := t.TempDir()
	client := filepath.Join(dir, "client.rpt")
	server := filepath.Join(dir, "server.rpt")
	require.NoError(t, os.WriteFile(client, []byte("connect \"zilla://streams/app0\"\nconnected\nwrite await ROUTED\nwrite \"go\"\n"), 0o644))
	require.NoError(t, os.WriteFile(server, []byte("accept \"zilla://streams/app0\"\naccepted\nconnected\nread \"go\"\n"), 0o644))
	var out, errb bytes.Buffer
	code := run([]string{"spec", "-t", "5s", "--notify", "ROUTED", client, server}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())

	out.Reset()
	errb.Reset()
	code = run([]string{"spec", "-t", "200ms", client, server}, &out, &errb)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errb.String(), "client.rpt:3: timed out waiting for barrier ROUTED")
}
