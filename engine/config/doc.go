// Package config loads a Sluice configuration: Zilla's zilla.yaml shape,
// validated against a JSON Schema that the compiled-in bindings extend.
//
// # The shape
//
// A file is one namespace (ARCHITECTURE.md §5, ZILLA.md §4):
//
//	name: example                   # required; ^[a-zA-Z]+[a-zA-Z0-9\._\-]*$
//	vaults:    {<name>: {type, options}}
//	guards:    {<name>: {type, kind, store, options}}
//	stores:    {<name>: {type, options}}
//	telemetry:
//	  attributes: {<key>: <string>}
//	  metrics:    [<metric>, …]
//	  exporters:  {<name>: {type, vault, options}}
//	bindings:
//	  <name>:
//	    type: tcp                   # required; a registered binding type
//	    kind: server                # required; client, server, proxy, remote_client,
//	                                # remote_server, cache_client or cache_server
//	    options: {…}                # the type's own schema
//	    exit: <binding>             # default route; a binding of the file or sys:<name>
//	    entry: <name>               # remote_client and remote_server only
//	    vault: <vault>
//	    telemetry: {metrics, attributes}
//	    routes:                     # in order; the first match wins
//	      - exit: <binding>
//	        when: [{…}, …]          # the type's condition schema
//	        with: {…}               # the type's with schema
//	        guarded: {<guard>: [<role>, …]}
//
// Unknown keys are rejected everywhere.
//
// # Schema
//
// The base schema (base.schema.json, JSON Schema draft 2020-12) covers the
// fixed shape. Each binding, guard, store, vault and exporter type adds a
// [Fragment], as Zilla's *.schema.patch.json files do: its type name, its
// kinds and the schemas of its options, route conditions and with.
// [NewSchema] compiles them into one [Schema]; a type that no fragment
// registered is an error, and each registered type's parts are checked by
// its own schema. A fragment's KindSchema adds what one kind requires or
// refuses of the type's shared schema, as Zilla's per-kind if/then does.
//
// Zilla options that Sluice does not implement are accepted by the schema
// and listed in the fragment's Unsupported, so that Load names them as
// not supported yet rather than as unknown keys:
//
//	server.yaml:26: bindings.net0.options.overrides: not supported yet: options.overrides (rewriting request headers)
//
// # Loading
//
// [Load] parses exactly one YAML document, keeping every node's position,
// substitutes ${{ env.NAME }} expressions, validates the result and checks
// the names it refers to: exits, route guards, guard stores, vaults, and
// the places a fragment marks with a [Ref]. An exit may also name a
// binding declared with [WithExternal], as Zilla's tests declare the
// peers their scripts play. Every problem is reported, one
// per line, sorted by line, as an [*ErrorList]:
//
//	sluice.yaml:6: bindings.net0: unknown key "timout"
//	sluice.yaml:7: bindings.net0.options.port: expected integer, got string
//	sluice.yaml:14: bindings.app0.exit: no binding named "app9"
//
// # Substitution
//
// ${{ env.NAME }} (spaces optional) is Zilla's resolver syntax. It is
// replaced in scalar values before validation, from os.LookupEnv or the
// function given to [WithLookupEnv]; an unset variable is an error at its
// line. A plain scalar that is exactly one expression is retyped from the
// substituted text the way YAML types a plain scalar: with PORT=8080,
// `port: ${{ env.PORT }}` is the integer 8080 (and an empty value is null,
// as Zilla's textual substitution would make it), while
// `port: "${{ env.PORT }}"` and `url: http://${{ env.HOST }}/` stay
// strings; the text never becomes a mapping or a list. Substituted text
// is not searched for expressions again. Other resolvers can be added with
// [WithResolver].
//
// # Options
//
// A binding's options, route conditions and with come as [Raw] values:
// the YAML node (positions kept, expressions substituted) and the generic
// value the schema saw. The binding decodes them itself with [Raw.Decode],
// which rejects keys its Go type has no field for and reports problems in
// the same file:line: path: message form.
//
// # Usage
//
//	schema, err := config.NewSchema(binding.Fragments()...)
//	if err != nil {
//		return err
//	}
//	cfg, err := config.LoadFile("sluice.yaml", schema)
//	if err != nil {
//		return err // one file:line: path: message per line
//	}
//	for _, b := range cfg.Bindings {
//		var opts struct {
//			Host string `yaml:"host"`
//			Port int    `yaml:"port"`
//		}
//		if err := b.Options.Decode(&opts); err != nil {
//			return err
//		}
//	}
package config
