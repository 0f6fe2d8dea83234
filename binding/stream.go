package binding

import (
	"errors"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// SendFragments sends p on s.Out as DATA frames of at most maxPayload
// bytes each, as far as the credit allows and while s.Out is open. first
// says p starts a message, so that its first frame carries INIT; last
// says p ends it, so that the frame with its last byte carries FIN. It
// returns how many bytes of p went, and the error of a DATA that could
// not go.
func SendFragments(s *engine.Stream, p []byte, first, last bool, maxPayload int) (int, error) {
	sent := 0
	for sent < len(p) && !s.Out.Closed() {
		rest := p[sent:]
		n := int(min(int64(len(rest)), s.Out.Available()-int64(s.Out.Pad), int64(maxPayload)))
		if n <= 0 {
			break
		}
		var flags frame.Flags
		if first && sent == 0 {
			flags |= frame.FlagDataInit
		}
		if last && n == len(rest) {
			flags |= frame.FlagDataFin
		}
		if err := s.Data(flags, rest[:n], nil); err != nil {
			return sent, err
		}
		sent += n
	}
	return sent, nil
}

// Violation reports whether err, from a receive helper of engine.Stream,
// says the frame broke its stream's order or flow control, which fails
// the stream. A malformed frame, which is only dropped, is not one.
func Violation(err error) bool {
	return err != nil && !errors.Is(err, engine.ErrMalformedFrame)
}

// Breach is Violation for a kind that drops a frame coming after its
// direction closed, as it drops a malformed one, rather than fail a
// stream that is over on that side already (tcp, toolkit).
func Breach(err error) bool {
	return Violation(err) && !errors.Is(err, engine.ErrStreamClosed)
}
