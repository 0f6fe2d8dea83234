// Package all links every binding type listed in binding/bindings.cfg into
// a binary: import it for its side effects.
//
//	import _ "github.com/sluicehq/sluice/binding/all"
package all
