package binding

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/engine/config"
)

// System bindings are the ones a configuration may name as sys:<name>
// without declaring them, like Zilla's sys namespace: the default chain
// that lets an http client reach http://host:port with no tcp client of
// the user's own.
var system = map[string]config.Binding{
	"tcp_client":  {Type: "tcp", Kind: "client"},
	"http_client": {Type: "http", Kind: "client", Exit: config.SysPrefix + "tcp_client"},
}

// SystemNames returns the sys: names Resolve can supply, sorted.
func SystemNames() []string {
	names := make([]string, 0, len(system))
	for n := range system {
		names = append(names, config.SysPrefix+n)
	}
	sortStrings(names)
	return names
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// Resolve completes a loaded configuration: a binding without an exit
// whose type and kind have a default exit (an http client's is
// sys:tcp_client) gets it, and every sys:<name> an exit or route names,
// directly or through another system binding, is added as a binding of
// that name. Call it after config.Load and before engine.New.
func Resolve(cfg *config.Config) error {
	for _, b := range cfg.Bindings {
		if b.Exit != "" || len(b.Routes) > 0 {
			continue
		}
		if info, err := Lookup(b.Type); err == nil && info.DefaultExit != nil {
			b.Exit = info.DefaultExit[b.Kind]
		}
	}
	for i := 0; i < len(cfg.Bindings); i++ {
		b := cfg.Bindings[i]
		refs := []string{b.Exit}
		for _, r := range b.Routes {
			refs = append(refs, r.Exit)
		}
		for _, ref := range refs {
			name, ok := strings.CutPrefix(ref, config.SysPrefix)
			if !ok || cfg.Binding(ref) != nil {
				continue
			}
			def, ok := system[name]
			if !ok {
				return fmt.Errorf("%s: bindings.%s: no system binding %q (have %s)", b.Pos, b.Name, ref, strings.Join(SystemNames(), ", "))
			}
			sb := def
			sb.Name, sb.Pos = ref, b.Pos
			cfg.Bindings = append(cfg.Bindings, &sb)
		}
	}
	return nil
}
