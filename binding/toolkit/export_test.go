package toolkit

// Long is the plan of a long_running_operation, as the tests see it.
type Long struct {
	Seconds float64
	Steps   int
	Token   string // raw JSON, "" when absent
}

// Answer answers one request as a handler's responder does: the result or
// error object, whether it is an error, and the plan when the request is
// a long-running operation (then out is "").
func Answer(kind uint8, ident, params []byte) (out string, isErr bool, long *Long) {
	var r responder
	oc, p := r.respond(kind, ident, params)
	switch oc {
	case outcomeLong:
		return "", false, &Long{Seconds: p.seconds, Steps: p.steps, Token: string(p.token)}
	case outcomeError:
		return string(r.out), true, nil
	}
	return string(r.out), false, nil
}

// LongResult is the result a long-running operation ends with.
func LongResult(seconds float64, steps int) string {
	return string(appendLongResult(nil, &plan{seconds: seconds, steps: steps}))
}

var (
	AppendNumber         = appendNumber
	AppendPercentDecoded = appendPercentDecoded
)

// Responder is a handler's responder.
type Responder = responder

// Respond is respond, returning the output's length.
func (r *responder) Respond(kind uint8, ident, params []byte) int {
	r.respond(kind, ident, params)
	return len(r.out)
}
