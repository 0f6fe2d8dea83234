// Command codegen turns IDL files into Go flyweights: zero-copy reader views
// and in-place builders, one Go file per IDL file.
//
// Each construct has its own template in templates/ (enum, reader, builder,
// list reader, list builder, alias, file header); the per-field pieces are
// rendered by the functions in snippets.go, and the result goes through
// go/format. Declarations are emitted in source order, so the output is
// byte-identical across runs.
//
// For every struct, union and list T it writes a reader T (Wrap, TryWrap,
// Offset, Limit, Sizeof, Buffer and one getter per field; Kind and one
// accessor per case for unions) and a builder TBuilder (Wrap, setters in IDL
// order, Build and BuildLimit). Enums become typed constants with String and
// Valid; typedefs of structs, unions and enums become Go aliases.
//
// A scalar or string field that two or more struct cases of a union declare
// with one name and type is also reachable through the union: a function
// <Union>Has<Field>(kind) reports which kinds have it, the reader returns it
// from whichever case is present (each such call views the case anew;
// ReadShared fills a <Union>Shared with all of them from one view), and the
// builder's Case(kind) selects a case whose shared fields its setters then
// write. A name that some case declares with another type, or whose
// methods would collide with the union's own, gets none of these.
//
//	go tool codegen -idl ../../idl/mcp.idl -dep ../../idl/core.idl -out .
//
// -idl names the file to generate; -dep names files whose types it refers
// to (their declarations are resolved but not generated: a union that
// extends core::stream::Extension inlines the parent's fields). The output
// is <idl base name>_gen.go in -out, in the package named by -pkg (default:
// the output directory's name).
package main
