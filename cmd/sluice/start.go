package main

import (
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
)

// defaultConfig is the configuration start uses when no -c is given.
//
//go:embed sluice.yaml
var defaultConfig []byte

// embeddedSource names the embedded default configuration in messages.
const embeddedSource = "embedded default"

const startUsage = `usage: sluice start [-c file] [-w n] [-e dir]

  -c, --config file      configuration file (default: the embedded sluice.yaml)
  -w, --workers n        number of workers (default %d, the number of CPUs)
  -e, --engine-dir dir   directory for the workers' ring files (default .sluice/engine)
`

// config is a configuration as loaded, before it is parsed.
type config struct {
	// source is the file path, or embeddedSource.
	source string
	data   []byte
}

// loadConfig reads the configuration file at path, or the embedded default
// when path is empty.
func loadConfig(path string) (config, error) {
	if path == "" {
		return config{source: embeddedSource, data: defaultConfig}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return config{}, err
	}
	return config{source: path, data: data}, nil
}

func runStart(args []string, stdout, stderr io.Writer) int {
	var (
		configPath string
		workers    int
		engineDir  string
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
		fs.IntVar(&workers, name, runtime.NumCPU(), "")
	}
	for _, name := range []string{"e", "engine-dir"} {
		fs.StringVar(&engineDir, name, ".sluice/engine", "")
	}
	fs.Usage = func() { fmt.Fprintf(fs.Output(), startUsage, runtime.NumCPU()) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	switch {
	case fs.NArg() > 0:
		return startUsageError(fs, fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	case workers < 1:
		return startUsageError(fs, fmt.Sprintf("-workers must be at least 1, got %d", workers))
	case engineDir == "":
		return startUsageError(fs, "-engine-dir must not be empty")
	}

	cfg, err := loadConfig(configPath)
	if err != nil {
		fmt.Fprintf(stderr, "sluice: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "sluice: no bindings yet (config: %s, workers: %d)\n", cfg.source, workers)
	return exitOK
}

func startUsageError(fs *flag.FlagSet, msg string) int {
	fmt.Fprintf(fs.Output(), "sluice start: %s\n", msg)
	fs.Usage()
	return exitUsage
}
