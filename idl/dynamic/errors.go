package dynamic

import "errors"

// Sentinel errors. Every error of the package is an *Error whose Kind is
// one of them, so callers can tell the classes apart with errors.Is.
var (
	// ErrUnknownType reports a type name the schema does not have, or one
	// that names no struct, union or list.
	ErrUnknownType = errors.New("dynamic: unknown type")
	// ErrUnknownMethod reports a method that is no field, case or array
	// singular of the type.
	ErrUnknownMethod = errors.New("dynamic: unknown method")
	// ErrArgs reports a wrong number or type of arguments.
	ErrArgs = errors.New("dynamic: bad arguments")
	// ErrRange reports a value that does not fit its field's encoding.
	ErrRange = errors.New("dynamic: value out of range")
	// ErrComputed reports an attempt to set a size field, which a builder
	// computes from the octets it sizes.
	ErrComputed = errors.New("dynamic: size field is computed")
	// ErrMissing reports a field without default that was never set, or a
	// union without a selected case.
	ErrMissing = errors.New("dynamic: required field not set")
	// ErrMalformed reports bytes that do not decode as the type; Err then
	// holds the flyweight sentinel (flyweight.ErrShort, ErrLength, …).
	ErrMalformed = errors.New("dynamic: malformed value")
	// ErrMismatch reports a decoded value that differs from a matcher.
	ErrMismatch = errors.New("dynamic: mismatch")
)

// Error locates a problem at a path from the root type, such as
// McpBeginEx.toolsCall.name or HttpBeginEx.headers[2].value. It formats as
// "path: message":
//
//	McpBeginEx.toolsCall.name: expected "get_weather", got "echo"
type Error struct {
	Path string
	Msg  string
	Kind error // one of the package's sentinels
	Err  error // the underlying cause, if any (e.g. flyweight.ErrShort)
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Unwrap returns the sentinel Kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}
