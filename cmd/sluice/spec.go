package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/spec"
)

const specUsage = `usage: sluice spec [-c file [--external name]... [--set name=value]... | --live] [-p name=value]... [-r alias=dir]... [-n barrier]... [-t timeout] [-w n] script...

  -c, --config file     start an engine from file and let the scripts play
                        its bindings' peers (engine-driven)
      --external name   with -c: a binding outside the file that its exits
                        may name, as Zilla's EngineRule.external declares;
                        names the scripts accept need no declaring
      --live            play tcp:// scripts over real sockets against a
                        server that is already running (e.g. sluice start)
  -p, --property n=v    override the script property n with the string v
  -r, --root alias=dir  resolve alias/<scenario>/<script> to dir/<scenario>/<script>.rpt
      --set n=v         set the engine setting n to v (with -c), as Zilla's
                        tests configure the engine: e.g. --set
                        mcp.session.id=5ca1ab1e-c0de-4a11-b0a7-000100000000
                        (the README lists the settings)
  -n, --notify barrier  notify the barrier as the run starts, as a k3po test's
                        notifyBarrier does for a barrier its scripts await
  -t, --timeout d       bound the run (default 10s)
  -w, --workers n       engine workers (default 2)

With neither -c nor --live the scripts play each other in memory (peer to
peer). A script is a path to a .rpt file, with or without the extension,
or a path under the scripts/ directory. Spec exits 0 when every script
completes, 1 when one fails (printing the failing line, what it expected
and the frame it observed) and 2 on a usage error.
`

// multiFlag collects a repeated name=value flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runSpec(args []string, stdout, stderr io.Writer) int {
	var (
		configPath string
		live       bool
		props      multiFlag
		roots      multiFlag
		external   multiFlag
		sets       multiFlag
		notify     multiFlag
		timeout    time.Duration
		workers    int
	)
	fs := flag.NewFlagSet("spec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, name := range []string{"c", "config"} {
		fs.StringVar(&configPath, name, "", "")
	}
	fs.BoolVar(&live, "live", false, "")
	fs.Var(&external, "external", "")
	for _, name := range []string{"p", "property"} {
		fs.Var(&props, name, "")
	}
	for _, name := range []string{"r", "root"} {
		fs.Var(&roots, name, "")
	}
	fs.Var(&sets, "set", "")
	for _, name := range []string{"n", "notify"} {
		fs.Var(&notify, name, "")
	}
	for _, name := range []string{"t", "timeout"} {
		fs.DurationVar(&timeout, name, spec.RunTimeout, "")
	}
	for _, name := range []string{"w", "workers"} {
		fs.IntVar(&workers, name, 2, "")
	}
	fs.Usage = func() { fmt.Fprint(fs.Output(), specUsage) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	switch {
	case fs.NArg() == 0:
		return usageError(fs, "spec", "no scripts given")
	case live && configPath != "":
		return usageError(fs, "spec", "-config and -live exclude each other")
	case len(external) > 0 && configPath == "":
		return usageError(fs, "spec", "-external needs -config")
	case timeout <= 0:
		return usageError(fs, "spec", "-timeout must be positive")
	case workers < 1:
		return usageError(fs, "spec", "-workers must be at least 1")
	case len(sets) > 0 && configPath == "":
		return usageError(fs, "spec", "-set needs -config: settings are the engine's")
	}
	opts := []spec.RunOption{spec.Timeout(timeout), spec.Workers(workers), spec.External(external...)}
	for _, p := range props {
		name, value, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return usageError(fs, "spec", fmt.Sprintf("-property %q: want name=value", p))
		}
		opts = append(opts, spec.Override(name, value))
	}
	for _, kv := range sets {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return usageError(fs, "spec", fmt.Sprintf("-set %q: want name=value", kv))
		}
		canon, err := engine.CheckSetting(name, value)
		if err != nil {
			return usageError(fs, "spec", err.Error())
		}
		if s, _ := engine.LookupSetting(canon); s.Unread != "" {
			fmt.Fprintf(stderr, "sluice spec: note: setting %s is accepted but not read: %s\n", canon, s.Unread)
		}
		opts = append(opts, spec.Setting(name, value))
	}
	for _, r := range roots {
		alias, dir, ok := strings.Cut(r, "=")
		if !ok || alias == "" || dir == "" {
			return usageError(fs, "spec", fmt.Sprintf("-root %q: want alias=dir", r))
		}
		opts = append(opts, spec.Root(alias, dir))
	}
	if len(notify) > 0 {
		bars := spec.NewBarriers()
		for _, name := range notify {
			if name == "" {
				return usageError(fs, "spec", "-notify wants a barrier name")
			}
			bars.Notify(name)
		}
		opts = append(opts, spec.WithBarriers(bars))
	}
	setup := spec.PeerToPeer(opts...)
	mode := "peer to peer"
	switch {
	case configPath != "":
		setup, mode = spec.Config(configPath, opts...), "against "+configPath
	case live:
		setup, mode = spec.Live(opts...), "over tcp"
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	if err := spec.Play(ctx, setup, fs.Args()...); err != nil {
		fmt.Fprintf(stderr, "FAIL %s (%s)\n%v\n", strings.Join(fs.Args(), " "), mode, err)
		return exitFail
	}
	fmt.Fprintf(stdout, "ok   %s (%s, %v)\n", strings.Join(fs.Args(), " "), mode, time.Since(start).Round(time.Millisecond))
	return exitOK
}
