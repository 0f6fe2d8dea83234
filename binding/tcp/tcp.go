package tcp

import (
	"fmt"
	"sync"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/frame/proxy"
)

func init() {
	binding.Register(binding.Info{
		Type:    "tcp",
		Kinds:   []string{config.KindServer, config.KindClient},
		Options: optionsSchema,
		When:    whenSchema,
		// A server needs a port (kinds.go).
		KindSchema: kindSchemas,
		New:        func() engine.Binding { return &Binding{} },
	})
}

// proxyType is the label whose id is the typeId of the ProxyBeginEx the
// binding writes and reads, as in Zilla.
const proxyType = "proxy"

// Binding is the tcp binding type. It is shared by every worker, and
// holds what their listeners share: the eBPF steering of each
// SO_REUSEPORT group.
type Binding struct {
	mu     sync.Mutex
	groups map[groupKey]*steerGroup
	// claimed holds the ports a binding of an engine has checked are free,
	// so that only the first of its workers probes (see claimPort).
	claimed map[groupKey]error
	// usage counts each worker's server connections against its
	// capacity.
	usage map[*engine.Worker]*workerUsage
	// load builds a steering program for a group of workers; tests
	// replace it to play a kernel that refuses.
	load func(workers int) (steerer, error)
}

// Attach checks the configuration and returns the handler for one worker:
// a server opens its listening sockets on the worker, a client waits for
// streams.
func (b *Binding) Attach(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error) {
	s, err := parse(w, cfg)
	if err != nil {
		return nil, err
	}
	h := newHandler(b, w, cfg, s)
	if h.maxPayload < 1 || h.window < 1 {
		return nil, fmt.Errorf("tcp: the engine's frames (%d bytes) and buffer slots (%d bytes) leave no room for data",
			w.MaxFrame(), w.BufferPool().SlotCapacity())
	}
	if cfg.Kind == config.KindServer {
		h.usage = b.usageOf(w)
		if err := h.listen(); err != nil {
			h.Detach()
			return nil, err
		}
	}
	return h, nil
}

// Handler is the tcp binding attached to one worker. It owns the
// worker's listening sockets and connections; its flyweights are reused
// for every frame: the BEGIN of a client's stream, the DATA a read
// builds in place and the ProxyBeginEx either way.
type Handler struct {
	b           *Binding
	w           *engine.Worker
	cfg         *engine.BindingConfig
	s           *settings
	id          int64
	server      bool
	proxyTypeID int32
	// window is the credit granted to the application for bytes to
	// write to a socket: what the buffer of a connection whose socket
	// is full can hold.
	window int32
	// maxPayload bounds the bytes read from a socket into one DATA.
	maxPayload int

	listeners []*listener
	conns     map[*conn]struct{}
	// usage is the worker's count of server connections; nil for a
	// client.
	usage *workerUsage

	begin  frame.Begin
	dataB  frame.DataBuilder
	proxyR proxy.ProxyBeginEx
	proxyB proxy.ProxyBeginExBuilder
}

func newHandler(b *Binding, w *engine.Worker, cfg *engine.BindingConfig, s *settings) *Handler {
	return &Handler{
		b: b, w: w, cfg: cfg, s: s, id: cfg.ID,
		server:      cfg.Kind == config.KindServer,
		proxyTypeID: w.Labels().Supply(proxyType),
		window:      int32(min(w.BufferPool().SlotCapacity(), 1<<30)),
		maxPayload:  w.MaxFrame() - frame.DataPayloadOffset,
		conns:       map[*conn]struct{}{},
	}
}

// NewStream takes a client's application streams; a server takes none,
// as it opens its streams itself.
func (h *Handler) NewStream(t frame.FrameType, buf []byte) engine.MessageConsumer {
	if h.server || t != frame.FrameBegin || !h.begin.TryWrap(buf, 0, len(buf)) {
		return nil
	}
	return newClientConn(h, &h.begin).onAppFn
}

// Detach closes the worker's listening sockets and every connection still
// open. The engine has already sent ABORT and RESET to the streams that
// were open, which closed their sockets; what is left holds no stream.
func (h *Handler) Detach() {
	for _, l := range h.listeners {
		l.close()
	}
	h.listeners = nil
	for c := range h.conns {
		c.closeSocket(true)
	}
	if h.usage != nil {
		h.b.releaseUsage(h.w)
	}
}

var (
	_ engine.Binding  = (*Binding)(nil)
	_ engine.Handler  = (*Handler)(nil)
	_ engine.Detacher = (*Handler)(nil)
)
