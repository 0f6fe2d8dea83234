package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine"
)

const startUsage = `usage: sluice start [-c file] [-w n] [-e dir] [--set name=value]... [--idle-spin d]
                    [--drain-timeout d]

  -c, --config file      configuration file (default: the embedded sluice.yaml)
  -w, --workers n        number of workers (default %d: the CPUs this process may use)
  -e, --engine-dir dir   directory for the workers' ring files (default .sluice/engine)
      --set n=v          set the engine setting n to v, e.g. --set mcp.lease.ttl=PT10S
                         (the README lists the settings)
      --idle-spin d      how long an idle worker polls before it sleeps, e.g. 200us
                         (default 0: it sleeps at once; spinning lowers latency
                         under light load at the cost of CPU)
      --drain-timeout d  how long SIGINT or SIGTERM lets the requests in flight
                         finish before the rest is cut (default 30s; 0 cuts at
                         once); a second signal cuts at once
      --cpuprofile file  write a CPU profile of the run to file (for diagnosis)

On SIGINT or SIGTERM, start stops accepting connections, lets the requests
in flight finish (closing idle connections and ending event streams that
GET requests hold open), stops and exits 0. When the drain timeout passes
first, what is left is cut and start exits 0 all the same; a second signal
cuts it at once and start exits 1.
`

// defaultDrainTimeout is how long a drain waits for the requests in
// flight by default, as long as Kubernetes' default grace period.
const defaultDrainTimeout = 30 * time.Second

// stopTimeout bounds the stop that follows the drain: the workers abort
// what is left and release their sockets.
const stopTimeout = 2 * time.Second

func runStart(args []string, stdout, stderr io.Writer) int {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	drain, startDrain := context.WithCancelCause(context.Background())
	cut, cutNow := context.WithCancelCause(context.Background())
	done := make(chan struct{})
	defer close(done)
	go func() {
		for _, cancel := range []context.CancelCauseFunc{startDrain, cutNow} {
			select {
			case s := <-signals:
				cancel(fmt.Errorf("%v signal received", s))
			case <-done:
				return
			}
		}
	}()
	return runEngine(drain, cut, args, stdout, stderr)
}

// startEngine runs the engine until ctx is done, then drains and stops it.
func startEngine(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runEngine(ctx, context.Background(), args, stdout, stderr)
}

// runEngine runs the engine until drain is done, then lets the work in
// flight finish, up to the drain timeout or until cut is done, and stops
// the engine.
func runEngine(drain, cut context.Context, args []string, stdout, stderr io.Writer) int {
	var (
		configPath   string
		workers      int
		engineDir    string
		cpuProfile   string
		idleSpin     time.Duration
		drainTimeout time.Duration
		sets         multiFlag
	)
	fs := flag.NewFlagSet("start", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// The flag package accepts -name and --name alike, so each long name is
	// registered beside its short one on the same variable; startUsage
	// documents each pair once.
	for _, name := range []string{"c", "config"} {
		fs.StringVar(&configPath, name, "", "")
	}
	for _, name := range []string{"w", "workers"} {
		fs.IntVar(&workers, name, engine.DefaultWorkers(), "")
	}
	for _, name := range []string{"e", "engine-dir"} {
		fs.StringVar(&engineDir, name, ".sluice/engine", "")
	}
	fs.StringVar(&cpuProfile, "cpuprofile", "", "")
	fs.Var(&sets, "set", "")
	fs.DurationVar(&idleSpin, "idle-spin", 0, "")
	fs.DurationVar(&drainTimeout, "drain-timeout", defaultDrainTimeout, "")
	fs.Usage = func() { fmt.Fprintf(fs.Output(), startUsage, engine.DefaultWorkers()) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	switch {
	case fs.NArg() > 0:
		return usageError(fs, "start", fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	case workers < 1 || workers > engine.MaxWorkers:
		return usageError(fs, "start", fmt.Sprintf("-workers must be between 1 and %d, got %d", engine.MaxWorkers, workers))
	case engineDir == "":
		return usageError(fs, "start", "-engine-dir must not be empty")
	case idleSpin < 0 || idleSpin > time.Second:
		return usageError(fs, "start", fmt.Sprintf("-idle-spin must be between 0 and 1s, got %s", idleSpin))
	case drainTimeout < 0:
		return usageError(fs, "start", fmt.Sprintf("-drain-timeout must not be negative, got %s", drainTimeout))
	}

	log := slog.New(slog.NewTextHandler(stderr, nil))
	opts := []engine.Option{engine.WithWorkers(workers), engine.WithDir(engineDir),
		engine.WithLogger(log), engine.WithBindings(binding.Factory), engine.WithIdleSpin(idleSpin)}
	for _, kv := range sets {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return usageError(fs, "start", fmt.Sprintf("-set %q: want name=value", kv))
		}
		if _, err := engine.CheckSetting(name, value); err != nil {
			return usageError(fs, "start", err.Error())
		}
		opts = append(opts, engine.WithSetting(name, value))
	}

	cfg, err := loadConfig(configPath)
	if err != nil {
		fmt.Fprintf(stderr, "sluice: %v\n", err)
		return exitUsage
	}
	e, err := engine.New(cfg, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "sluice: %v\n", err)
		return exitUsage
	}
	if err := e.Start(); err != nil {
		fmt.Fprintf(stderr, "sluice: %v\n", err)
		return exitFail
	}
	log.Info("started", "namespace", cfg.Name, "config", cfg.File, "engine", engineDir,
		"workers", workers, "bindings", e.BindingNames())
	fmt.Fprintf(stdout, "sluice: started %s with %d workers\n", cfg.Name, workers)

	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "sluice: cpu profile: %v\n", err)
			return exitFail
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	<-drain.Done()
	log.Info("draining", "reason", context.Cause(drain), "timeout", drainTimeout)
	drainCtx, cancelDrain := context.WithTimeoutCause(cut, drainTimeout,
		fmt.Errorf("drain timeout %s passed", drainTimeout))
	defer cancelDrain()
	if err := e.Drain(drainCtx); err != nil {
		log.Warn("drain cut short: aborting what is left", "err", err)
	}
	log.Info("stopping")
	stopCtx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	if err := e.Stop(stopCtx); err != nil {
		fmt.Fprintf(stderr, "sluice: %v\n", err)
		return exitFail
	}
	log.Info("stopped")
	if cut.Err() != nil {
		return exitFail
	}
	return exitOK
}

func usageError(fs *flag.FlagSet, cmd, msg string) int {
	fmt.Fprintf(fs.Output(), "sluice %s: %s\n", cmd, msg)
	fs.Usage()
	return exitUsage
}
