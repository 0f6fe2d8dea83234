// Package binding is the registry of binding types and the factory the
// engine attaches them through.
//
// A binding type (tcp, http, mcp, toolkit, echo, …) turns frames on one
// side of a pipeline into frames on the other, for example raw TCP bytes
// into streams that carry HTTP headers in their BEGIN extension. Each type
// lives in its own package, binding/<name>; a type whose kinds grow large
// keeps its vocabulary (extensions, options schema, registration) there
// and gives each kind a package below it, as binding/mcp does with
// binding/mcp/server, proxy and client. binding/README.md maps them.
//
// Registration happens in init:
//
//   - A type calls [Register] with an [Info]: its name, its kinds, the
//     JSON Schema fragments of its options and routes, the default exit of
//     a kind (an http client's is sys:tcp_client), and New, the type's
//     process-wide [engine.Binding].
//   - A type whose kinds are packages of their own leaves Info.New nil,
//     and each kind's package calls [RegisterKind] with a [Kind].
//   - Registering twice, or without a name or kinds, panics: it is a
//     programming error.
//
// Which types a binary has is decided by the packages it links.
// binding/bindings.cfg lists the default set as type:package lines
// (type.kind for a kind's package); go generate ./binding/all turns it
// into binding/all/all_gen.go, whose blank imports cmd/sluice links. The
// test binding ([github.com/sluicehq/sluice/binding/test]) is not in that
// set: the spec runner registers it for the scripts that need it.
//
// The engine resolves a configured binding's type through [Factory],
// which returns the type's factory, or for a type registered by kinds one
// that attaches each binding through its kind's factory:
//
//	cfg, _ := config.LoadFile(path, schema) // schema from Fragments()
//	_ = binding.Resolve(cfg)                // default exits, sys: bindings
//	e, _ := engine.New(cfg, engine.WithBindings(binding.Factory))
//
// The package also holds what every binding's streams share: [Provisioned]
// reads the state a kind provisioned for an engine, [SendFragments] sends
// a message in DATA frames as credit allows, and [Violation] tells a
// receive error that fails a stream from a frame that is only dropped.
//
// [Fragments] gives the config schema every registered type contributes,
// and [Resolve] completes a configuration with default exits and the
// system bindings (sys:tcp_client, sys:http_client) it names.
package binding
