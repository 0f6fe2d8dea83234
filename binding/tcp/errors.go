package tcp

import "errors"

// Configuration errors, matched with errors.Is. Each comes wrapped with
// the file, line and option it is about.
var (
	// ErrKind reports a kind other than server and client.
	ErrKind = errors.New("tcp: unsupported kind")
	// ErrNoExit reports a server with neither an exit nor routes, or a
	// route whose exit names no binding.
	ErrNoExit = errors.New("tcp: no exit")
	// ErrPort reports a missing or malformed port.
	ErrPort = errors.New("tcp: invalid port")
	// ErrHost reports a host that cannot be used.
	ErrHost = errors.New("tcp: invalid host")
	// ErrRoute reports a route condition that cannot be used.
	ErrRoute = errors.New("tcp: invalid route")
)
