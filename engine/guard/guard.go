package guard

import (
	"encoding/json"
	"fmt"
	"github.com/sluicehq/sluice/engine/spi"
	"math"
)

// Session ids and expiry times, as Zilla's GuardHandler defines them. A
// session id travels in the authorization field of every frame.
const (
	// NotAuthorized is the session id of a refused authorization.
	NotAuthorized int64 = 0

	// NeedsPreauthorize is returned by [Handler.Reauthorize] when the
	// credentials are recognized but an out-of-band step must come first;
	// [Handler.Preauthorize] gives the URL the user must visit. It has the
	// high bit set and no [MaskAuthorized] bits, so [Authorized] is false.
	NeedsPreauthorize int64 = math.MinInt64

	// MaskAuthorized isolates the bits of a valid session id: a result r
	// of Reauthorize is a session when r&MaskAuthorized != 0.
	MaskAuthorized int64 = math.MaxInt64

	// ExpiresNever is the expiry of a session that does not expire.
	ExpiresNever int64 = math.MaxInt64
)

// Authorized reports whether a result of [Handler.Reauthorize] is a
// session, as opposed to [NotAuthorized] or [NeedsPreauthorize].
func Authorized(session int64) bool { return session&MaskAuthorized != 0 }

// Dispatcher runs a function on the thread of the worker it belongs to;
// see [spi.Dispatcher]. A Handler completes each operation through the
// Dispatcher it was attached with.
type Dispatcher = spi.Dispatcher

// DispatcherFunc adapts a function to a [Dispatcher].
type DispatcherFunc = spi.DispatcherFunc

// Clock tells the time; it is injected so tests can move time by hand.
type Clock = spi.Clock

// SystemClock is the real [Clock], the default wherever a nil Clock is
// passed.
type SystemClock = spi.SystemClock

// ClockFunc adapts a function such as time.Now to a [Clock].
type ClockFunc = spi.ClockFunc

// Handler is one worker's view of a [Guard]. All methods but Preauthorize
// answer at once from what the guard holds, without I/O, so bindings may
// call them on the frame path. Times are Unix milliseconds.
type Handler interface {
	// Reauthorize checks credentials and returns a new session id, or
	// [NotAuthorized], or [NeedsPreauthorize]. A session id obliges the
	// caller to call Deauthorize once when the stream or connection that
	// acquired it ends.
	Reauthorize(traceID, bindingID, contextID int64, credentials string) int64

	// Deauthorize releases a session.
	Deauthorize(session int64)

	// Identity returns the session's identity (a JWT's sub, say), or "".
	Identity(session int64) string

	// Attribute returns the named attribute of the session, or "".
	Attribute(session int64, name string) string

	// Credentials returns the credentials the session was authorized with,
	// or "".
	Credentials(session int64) string

	// Verify reports whether the session holds every one of roles; routes'
	// guarded: clauses use it.
	Verify(session int64, roles []string) bool

	// ExpiresAt returns when the session expires, [ExpiresNever], or 0 for
	// an unknown session.
	ExpiresAt(session int64) int64

	// ExpiringAt returns when the session should next be challenged, which
	// may be before ExpiresAt, or 0 for an unknown session.
	ExpiringAt(session int64) int64

	// Challenge reports whether the session should be challenged at now.
	Challenge(session int64, now int64) bool

	// Preauthorize completes, through the Dispatcher, with the URL the user
	// must visit before Reauthorize can succeed (it drives MCP URL-mode
	// elicitation and OAuth), or "" when the guard needs no such step.
	// session is one another guard already established for the request,
	// or 0. callback, when not "", is where the user's browser is to come
	// back to (the redirect_uri the URL carries), as Zilla's preauthorize
	// takes it.
	Preauthorize(traceID, bindingID, contextID, session int64, callback string, done func(url string, err error))
}

// Guard is the process-wide instance of one configured guard. Each worker
// attaches once and keeps the returned [Handler].
type Guard interface {
	// Attach returns a Handler that completes through d. d must not be nil.
	Attach(d Dispatcher) Handler

	// Close releases the guard; later authorizations fail. Close is
	// idempotent.
	Close() error
}

// Info describes a guard type for the registry.
type Info struct {
	// Type is the name configurations use, as in guards.<name>.type.
	Type string

	// Schema is the JSON Schema of the type's options object.
	Schema json.RawMessage

	// New creates the process-wide instance of the guard configured under
	// name. options is the decoded options object (nil when absent); New
	// rejects unknown keys. A nil clock means [SystemClock].
	New func(name string, options map[string]any, clock Clock) (Guard, error)
}

var registry = spi.NewRegistry[Info]("guard", ErrUnknownType)

// Register adds a guard type. Call it from an init function. It panics on
// an empty type, a nil New or a type registered twice: those are
// programming mistakes that must fail at start-up.
func Register(info Info) {
	if info.New == nil && info.Type != "" {
		panic(fmt.Sprintf("guard: Register %q with nil New", info.Type))
	}
	registry.Register(info.Type, info)
}

// Lookup returns the registered type typ, or an error wrapping
// [ErrUnknownType].
func Lookup(typ string) (Info, error) { return registry.Lookup(typ) }

// Types returns the registered type names, sorted.
func Types() []string { return registry.Types() }

// New looks typ up and creates the guard configured under name. Errors
// from the type are wrapped with the type and name, as in
// `guard/test "guard0": guard: unknown option "lifetme"`.
func New(typ, name string, options map[string]any, clock Clock) (Guard, error) {
	info, err := Lookup(typ)
	if err != nil {
		return nil, err
	}
	if clock == nil {
		clock = SystemClock{}
	}
	g, err := info.New(name, options, clock)
	if err != nil {
		return nil, fmt.Errorf("guard/%s %q: %w", typ, name, err)
	}
	return g, nil
}
