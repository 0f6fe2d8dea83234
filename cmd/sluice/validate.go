package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

const validateUsage = `usage: sluice validate [-c file] [--external name]...

  -c, --config file   configuration file (default: the embedded sluice.yaml)
      --external name a binding outside the file that exits may name, as
                      Zilla's tests declare the peers their scripts play

Validate loads the configuration as start would and reports every problem
as file:line: path: message. It exits 0 when the file is valid and 2 when
it is not.
`

func runValidate(args []string, stdout, stderr io.Writer) int {
	var (
		configPath string
		external   multiFlag
	)
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, name := range []string{"c", "config"} {
		fs.StringVar(&configPath, name, "", "")
	}
	fs.Var(&external, "external", "")
	fs.Usage = func() { fmt.Fprint(fs.Output(), validateUsage) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		return usageError(fs, "validate", fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	cfg, err := loadConfig(configPath, external...)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "%s: valid (%d bindings)\n", cfg.File, len(cfg.Bindings))
	return exitOK
}
