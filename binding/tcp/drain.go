package tcp

import "github.com/sluicehq/sluice/engine"

// Drain closes the worker's listening sockets, so that the port takes no
// new connection here, and leaves the accepted connections open: the
// binding above each one closes it once its work is done. What waits in
// a socket's backlog is accepted first, since closing the socket would
// reset it.
func (h *Handler) Drain() {
	for _, l := range h.listeners {
		if l.fd >= 0 {
			l.accept(0)
		}
		l.close()
	}
	h.listeners = nil
}

// Drained reports whether a server has no accepted connection left open.
// A client's connections are its callers' and are not waited for.
func (h *Handler) Drained() bool { return !h.server || len(h.conns) == 0 }

var _ engine.Drainer = (*Handler)(nil)

// logListening logs the address a server listens on, once for all the
// workers: each listens on the same ones.
func (h *Handler) logListening(l *listener) {
	if h.w.Index() == 0 {
		h.w.Logger().Info("listening", "binding", h.cfg.Name, "address", l.addr.String())
	}
}
