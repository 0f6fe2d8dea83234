package guard

import "errors"

var (
	// ErrUnknownType is returned by [Lookup] and [New] for a guard type that
	// no package registered.
	ErrUnknownType = errors.New("guard: unknown type")

	// ErrUnknownOption is returned when a guard's options hold a key its
	// type does not define; options are strict, like the rest of the
	// configuration.
	ErrUnknownOption = errors.New("guard: unknown option")

	// ErrInvalidOption is returned when a known option has the wrong shape
	// or value, for example a lifetime that is not an ISO-8601 duration.
	ErrInvalidOption = errors.New("guard: invalid option")

	// ErrInvalidDuration is returned by [ParseDuration] for text that is
	// not a non-negative ISO-8601 duration of the form PnDTnHnMn.nS.
	ErrInvalidDuration = errors.New("guard: invalid duration")

	// ErrClosed completes a [Handler.Preauthorize] whose [Guard] has been
	// closed.
	ErrClosed = errors.New("guard: closed")
)
