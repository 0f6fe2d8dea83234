package enginetest

import (
	"fmt"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// OpenStream opens, from w's thread, the stream whose BEGIN has the header
// h and the extension ext (nil: none), built in buf; handler takes the
// frames that come back on it and on its reply.
func OpenStream(w *engine.Worker, buf []byte, h Head, ext []byte, handler engine.MessageConsumer) error {
	var b frame.BeginBuilder
	n, err := Begin(&b, buf, h).Extension(ext).BuildLimit()
	if err != nil {
		return err
	}
	return w.NewStream(buf[:n], handler)
}

// SendFrame sends, from w's thread, a WINDOW, END, ABORT or RESET with the
// header h and nothing more (a WINDOW with no budget or padding), built in
// buf. A ring too full to take it is ring.ErrFull, for the caller to try
// again later.
func SendFrame(w *engine.Worker, buf []byte, t frame.FrameType, h Head) error {
	var n int
	var err error
	switch t {
	case frame.FrameWindow:
		var b frame.WindowBuilder
		n, err = Window(&b, buf, h)
	case frame.FrameEnd:
		var b frame.EndBuilder
		n, err = End(&b, buf, h)
	case frame.FrameAbort:
		var b frame.AbortBuilder
		n, err = withHead(b.Wrap(buf, 0, len(buf)), h).BuildLimit()
	case frame.FrameReset:
		var b frame.ResetBuilder
		n, err = withHead(b.Wrap(buf, 0, len(buf)), h).BuildLimit()
	default:
		return fmt.Errorf("enginetest: SendFrame cannot send a %s", t)
	}
	if err != nil {
		return err
	}
	return w.Send(t, buf[:n])
}
