package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// streamOptions are a connect's or accept's zilla:… options, as k3po's
// zilla transport reads them (ZILLA.md §7).
type streamOptions struct {
	window        int64  // zilla:window, the credit this side grants
	padding       int    // zilla:padding, charged per DATA the peer sends
	budgetID      int64  // zilla:budgetId
	transmission  string // zilla:transmission: duplex, half-duplex, simplex
	update        string // zilla:update: stream, proactive, message, handshake, none
	throttle      string // zilla:throttle: stream, message, none
	authorization int64  // zilla:authorization, set on every frame sent
	affinity      int64  // zilla:affinity, set on the BEGIN
	capabilities  uint8  // zilla:capabilities, set on every WINDOW
	httpTransport string // http:transport, the address an http:// stream runs on
	streamID      int64  // zilla:streamId, a connect's initial stream id (0: the network picks)
}

// defaultWindow is the credit granted when zilla:window is not given.
const defaultWindow = 65536

func defaultOptions() streamOptions {
	return streamOptions{window: defaultWindow, transmission: "duplex", update: "stream", throttle: "stream"}
}

// setOption applies one option; v is its evaluated value.
func (o *streamOptions) set(name string, v any) error {
	switch name {
	case "zilla:window":
		n, err := nonNegative(name, v)
		o.window = n
		return err
	case "zilla:padding":
		n, err := nonNegative(name, v)
		o.padding = int(n)
		return err
	case "zilla:budgetId":
		n, err := integer(name, v)
		o.budgetID = n
		return err
	case "zilla:authorization":
		n, err := integer(name, v)
		o.authorization = n
		return err
	case "zilla:affinity":
		n, err := integer(name, v)
		o.affinity = n
		return err
	case "zilla:streamId":
		n, err := integer(name, v)
		o.streamID = n
		return err
	case "zilla:transmission":
		return oneOfOption(name, v, &o.transmission, "duplex", "half-duplex", "simplex")
	case "zilla:update":
		return oneOfOption(name, v, &o.update, "stream", "proactive", "message", "handshake", "none")
	case "zilla:throttle":
		return oneOfOption(name, v, &o.throttle, "stream", "message", "none")
	case "http:transport":
		s, ok := v.(string)
		if !ok || !strings.Contains(s, "://") {
			return fmt.Errorf("option %s wants an address such as \"zilla://streams/net0\", got %s", name, describeValue(v))
		}
		o.httpTransport = s
		return nil
	case "zilla:capabilities":
		s, ok := v.(string)
		if !ok {
			n, err := integer(name, v)
			o.capabilities = uint8(n)
			return err
		}
		o.capabilities = 0
		for _, c := range strings.FieldsFunc(s, func(r rune) bool { return r == '|' || r == ' ' || r == ',' }) {
			switch strings.ToUpper(c) {
			case "CHALLENGE":
				o.capabilities |= 1 << 0
			default:
				return fmt.Errorf("option %s: unknown capability %q (want CHALLENGE)", name, c)
			}
		}
		return nil
	}
	return errUnsupportedOption
}

var errUnsupportedOption = fmt.Errorf("unsupported option")

func integer(name string, v any) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case int32:
		return int64(v), nil
	case int:
		return int64(v), nil
	case string:
		if n, err := strconv.ParseInt(v, 0, 64); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("option %s wants a number, got %s", name, describeValue(v))
}

func nonNegative(name string, v any) (int64, error) {
	n, err := integer(name, v)
	if err == nil && n < 0 {
		err = fmt.Errorf("option %s wants a non-negative number, got %d", name, n)
	}
	return n, err
}

func oneOfOption(name string, v any, dst *string, allowed ...string) error {
	s, ok := v.(string)
	if ok {
		for _, a := range allowed {
			if s == a {
				*dst = s
				return nil
			}
		}
	}
	return fmt.Errorf("option %s wants one of %q, got %s", name, allowed, describeValue(v))
}

// parseFlags reads a zilla:flags value: a number, or names among none,
// init, fin, incomplete and skip joined by "|", "," or spaces ("auto"
// restores the default).
func parseFlags(v any) (flags uint8, auto bool, err error) {
	if s, ok := v.(string); ok {
		if s == "auto" {
			return 0, true, nil
		}
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == '|' || r == ' ' || r == ',' }) {
			switch strings.ToLower(f) {
			case "none":
			case "init":
				flags |= flagInit
			case "fin":
				flags |= flagFin
			case "incomplete":
				flags |= flagIncomplete
			case "skip":
				flags |= flagSkip
			default:
				return 0, false, fmt.Errorf("zilla:flags: unknown flag %q (want none, init, fin, incomplete or skip)", f)
			}
		}
		return flags, false, nil
	}
	n, err := integer("zilla:flags", v)
	if err != nil || n < 0 || n > 0xff {
		return 0, false, fmt.Errorf("zilla:flags wants flag names or a byte, got %s", describeValue(v))
	}
	return uint8(n), false, nil
}
