package store

import "errors"

var (
	// ErrUnknownType is returned by [Lookup] and [New] for a store type that
	// no package registered.
	ErrUnknownType = errors.New("store: unknown type")

	// ErrUnknownOption is returned when a store's options hold a key its
	// type does not define; options are strict, like the rest of the
	// configuration.
	ErrUnknownOption = errors.New("store: unknown option")

	// ErrInvalidOption is returned when a known option has the wrong shape,
	// for example a number where a string is expected.
	ErrInvalidOption = errors.New("store: invalid option")

	// ErrNegativeTTL completes a [Handler.Put] whose ttl is below zero. A
	// ttl of zero means the entry never expires.
	ErrNegativeTTL = errors.New("store: negative ttl")

	// ErrClosed completes operations of a [Handler] whose [Store] has been
	// closed.
	ErrClosed = errors.New("store: closed")
)
