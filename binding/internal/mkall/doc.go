// Command mkall turns binding/bindings.cfg — one "type:package" line per
// binding type — into binding/all/all_gen.go, which imports each package
// for its init registration. The list is data so that a build can choose
// its bindings by editing one file.
package main
