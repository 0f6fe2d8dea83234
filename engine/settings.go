package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
)

// Setting declares one engine setting: a name=value pair the engine
// carries for its bindings, which read it when they are provisioned
// ([Engine.Setting]), as Zilla's binding factories read the engine
// configuration properties its tests pin with EngineRule.configure.
// Bindings declare their settings from init with [RegisterSetting].
//
// Names are Zilla's property names without the "zilla.binding." or
// "zilla." prefix: zilla.binding.mcp.session.id is mcp.session.id. Either
// form is accepted ([CanonicalSetting]).
type Setting struct {
	// Name is the canonical name, such as "mcp.session.id".
	Name string
	// Usage says in one line what the value means and its default.
	Usage string
	// Check validates a value; nil accepts any.
	Check func(value string) error
	// Unread, when set, says why no binding reads the setting yet: one of
	// Zilla's that Sluice accepts (and checks), so that a test's settings
	// carry over whole, but that changes nothing; [New] logs the reason
	// as a warning rather than ignore the value silently.
	Unread string
}

var (
	settingsMu  sync.RWMutex
	settingDefs = map[string]Setting{}
)

// ErrUnknownSetting reports a setting name no binding declares.
var ErrUnknownSetting = errors.New("engine: unknown setting")

// RegisterSetting declares a setting. It panics on an empty, prefixed or
// duplicate name: declarations are fixed at init.
func RegisterSetting(s Setting) {
	if s.Name == "" || CanonicalSetting(s.Name) != s.Name {
		panic(fmt.Sprintf("engine: RegisterSetting %q: want a name without the zilla. prefix", s.Name))
	}
	settingsMu.Lock()
	defer settingsMu.Unlock()
	if _, dup := settingDefs[s.Name]; dup {
		panic(fmt.Sprintf("engine: RegisterSetting %q: already registered", s.Name))
	}
	settingDefs[s.Name] = s
}

// CanonicalSetting returns name without Zilla's "zilla.binding." or
// "zilla." prefix.
func CanonicalSetting(name string) string {
	if rest, ok := strings.CutPrefix(name, "zilla.binding."); ok {
		return rest
	}
	if rest, ok := strings.CutPrefix(name, "zilla."); ok {
		return rest
	}
	return name
}

// LookupSetting returns the declaration of name, in either form.
func LookupSetting(name string) (Setting, bool) {
	settingsMu.RLock()
	defer settingsMu.RUnlock()
	s, ok := settingDefs[CanonicalSetting(name)]
	return s, ok
}

// Settings returns every declared setting, sorted by name.
func Settings() []Setting {
	settingsMu.RLock()
	defer settingsMu.RUnlock()
	out := make([]Setting, 0, len(settingDefs))
	for _, s := range settingDefs {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// CheckSetting validates name=value against the declarations and returns
// the canonical name. An unknown name's error lists the ones bindings
// read.
func CheckSetting(name, value string) (string, error) {
	s, ok := LookupSetting(name)
	if !ok {
		var known []string
		for _, s := range Settings() {
			if s.Unread == "" {
				known = append(known, s.Name)
			}
		}
		return "", fmt.Errorf("%w %q (known: %s)", ErrUnknownSetting, name, strings.Join(known, ", "))
	}
	if s.Check != nil {
		if err := s.Check(value); err != nil {
			return "", fmt.Errorf("engine: setting %s=%q: %w", s.Name, value, err)
		}
	}
	return s.Name, nil
}

// WithSetting sets the engine setting name (in either form) to value;
// [New] rejects names no binding declares and values their check refuses.
func WithSetting(name, value string) Option {
	return func(o *Options) {
		if o.Settings == nil {
			o.Settings = map[string]string{}
		}
		o.Settings[name] = value
	}
}

// checkSettings validates the options' settings and returns them under
// their canonical names; it warns of those no binding reads.
func checkSettings(in map[string]string, log *slog.Logger) (map[string]string, error) {
	out := make(map[string]string, len(in))
	names := make([]string, 0, len(in))
	for name := range in {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		canon, err := CheckSetting(name, in[name])
		if err != nil {
			return nil, err
		}
		if _, dup := out[canon]; dup {
			return nil, fmt.Errorf("engine: setting %s is given twice", canon)
		}
		out[canon] = in[name]
		if s, _ := LookupSetting(canon); s.Unread != "" {
			log.Warn("engine setting not read", "setting", canon, "reason", s.Unread)
		}
	}
	return out, nil
}

// Setting returns the value the engine was given for the setting name
// (canonical), and whether it was given: a binding reads its settings
// when it is provisioned and falls back to its default otherwise.
func (e *Engine) Setting(name string) (string, bool) {
	v, ok := e.settings[name]
	return v, ok
}
