package config

import (
	"fmt"
	"os"
)

// Option adjusts how Load reads a configuration.
type Option func(*options)

type options struct {
	resolvers map[string]func(string) (string, bool)
	external  []string
}

// WithLookupEnv sets where ${{ env.NAME }} takes its values from; the
// default is os.LookupEnv.
func WithLookupEnv(lookup func(name string) (string, bool)) Option {
	return WithResolver("env", lookup)
}

// WithResolver adds a resolver for ${{ name.key }} expressions, alongside
// env; Zilla's specs, for instance, use a test resolver. A nil lookup
// removes the resolver.
func WithResolver(name string, lookup func(key string) (string, bool)) Option {
	return func(o *options) {
		if lookup == nil {
			delete(o.resolvers, name)
			return
		}
		o.resolvers[name] = lookup
	}
}

// WithExternal declares binding names that exits may name although the
// file does not define them, such as the peers a spec script plays.
func WithExternal(names ...string) Option {
	return func(o *options) { o.external = append(o.external, names...) }
}

// Load reads the configuration src, naming it file in errors.
//
// It parses exactly one YAML document (duplicate keys are an error;
// anchors, aliases and merge keys are fine), substitutes ${{ env.NAME }}
// expressions in scalar values, validates the result against schema (nil
// means the base schema with no registered types), and checks that every
// exit, guard, store and vault a value names is declared. On failure it
// returns an [*ErrorList] with every problem found, one per line, each
// reading file:line: path: message.
func Load(file string, src []byte, schema *Schema, opts ...Option) (*Config, error) {
	o := &options{resolvers: map[string]func(string) (string, bool){"env": os.LookupEnv}}
	for _, opt := range opts {
		opt(o)
	}
	if schema == nil {
		s, err := defaultSchema()
		if err != nil {
			return nil, err
		}
		schema = s
	}

	root, errs := parse(file, src)
	if errs != nil {
		return nil, newErrorList(errs)
	}
	t := &tree{file: file, resolvers: o.resolvers}
	t.convert(root)
	errs = t.errs

	schemaErrs := t.validate(schema)
	errs = append(errs, schemaErrs...)
	reported := map[string]bool{}
	for _, e := range schemaErrs {
		if e.ptr != "" {
			reported[e.ptr] = true
		}
	}

	b := &builder{t: t, s: schema, o: o, reported: reported}
	b.build()
	errs = append(errs, b.errs...)
	if len(errs) > 0 {
		return nil, newErrorList(errs)
	}
	return b.cfg, nil
}

// LoadFile reads and loads the configuration at path; errors name the file
// by path.
func LoadFile(path string, schema *Schema, opts ...Option) (*Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Load(path, src, schema, opts...)
}
