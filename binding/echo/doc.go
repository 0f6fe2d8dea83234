// Package echo is the echo binding: a server kind that answers every
// stream with what it receives — the BEGIN extension, each DATA (payload,
// flags and extension), FLUSH, and END or ABORT — for tests and demos.
//
// Flow control passes straight through: echo offers its initial direction
// the window its reply direction is offered, less what is still in flight,
// and reserves on the reply exactly what each DATA reserved on the
// initial.
//
//	bindings:
//	  app0:
//	    type: echo
//	    kind: server
package echo
