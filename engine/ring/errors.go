package ring

import "errors"

var (
	// ErrFull is returned by [Ring.Claim] and [Ring.Write] when the ring has
	// no room for the record. The ring refuses rather than blocks or drops:
	// nothing was written, and the caller decides whether to retry later.
	ErrFull = errors.New("ring: full")

	// ErrTooLarge is returned for a payload longer than [Ring.MaxMessage].
	ErrTooLarge = errors.New("ring: message too large")

	// ErrLength is returned for a negative payload length.
	ErrLength = errors.New("ring: negative message length")

	// ErrType is returned for a message type that is not positive: zero
	// marks unwritten space and negative types are reserved ([PaddingType]).
	ErrType = errors.New("ring: message type must be positive")

	// ErrCapacity is returned by [NewHeap], [Map] and [Open] when the data
	// capacity is not a power of two in [MinCapacity, MaxCapacity]; for Open
	// that means a file size other than such a capacity plus [TrailerLength].
	ErrCapacity = errors.New("ring: capacity must be a power of two in [64, 1<<30]")

	// ErrCorrupt is returned by [Open] when the trailer's head and tail
	// positions cannot belong to a ring of the file's capacity.
	ErrCorrupt = errors.New("ring: corrupt trailer")
)
