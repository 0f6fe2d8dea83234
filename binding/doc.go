// Package binding is the binding SPI and the registry of binding types.
//
// A binding type (tcp, http, echo, mcp, …) turns frames on one side of the
// pipeline into frames on the other, for example raw TCP bytes into streams
// that carry HTTP headers in their BEGIN extension. Each type lives in its
// own sub-package, binding/<name>, whose directory name equals its package
// name; large types split their kinds further, as binding/mcp does for its
// server, proxy and client kinds.
//
// Binding types register themselves from an init function under a dotted
// id such as binding.http.server or binding.mcp.proxy, so the set of types
// compiled into a binary is decided by which sub-packages it imports. A
// configuration names a binding's type and kind; the engine looks the id up
// in the registry and attaches the binding to each worker.
//
// This package is being built up issue by issue; the SPI and registry types
// arrive with the engine.
package binding
