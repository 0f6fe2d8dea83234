package toolkit

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

func init() {
	binding.Register(binding.Info{
		Type:    "toolkit",
		Kinds:   []string{"server"},
		Options: json.RawMessage(`{"type": "object", "additionalProperties": false}`),
		New:     func() engine.Binding { return Binding{} },
	})
}

// ErrKind reports a kind other than server.
var ErrKind = errors.New("toolkit: unsupported kind")

// The capabilities the toolkit declares on a session's lifecycle reply.
// Its lists never change; SERVER_TOOLS_LIST_CHANGED is declared all the
// same, so a client that waits for list_changed support sees it.
const serverCapabilities = uint16(mcp.McpCapabilitiesServerTools | mcp.McpCapabilitiesServerPrompts |
	mcp.McpCapabilitiesServerResources | mcp.McpCapabilitiesServerResourcesSubscribe |
	mcp.McpCapabilitiesServerToolsListChanged)

// lifecycleWindow is the credit granted a lifecycle stream, which carries
// no data the toolkit reads.
const lifecycleWindow = 8192

// Binding is the toolkit binding type.
type Binding struct{}

// Attach checks the configuration and returns the handler for one worker.
func (Binding) Attach(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error) {
	if cfg.Kind != "server" {
		return nil, fmt.Errorf("%w %q: only server", ErrKind, cfg.Kind)
	}
	return &Handler{
		w:          w,
		pool:       w.BufferPool(),
		typeID:     w.Labels().Supply("mcp"),
		maxPayload: w.MaxFrame() - frame.DataPayloadOffset,
	}, nil
}

// Handler is the toolkit attached to one worker. Its flyweights, the
// builders of its extensions and its responder are reused for every
// frame of every stream it serves.
type Handler struct {
	w          *engine.Worker
	pool       *engine.BufferPool
	typeID     int32 // label id of "mcp", the extensions' typeId
	maxPayload int   // the largest DATA payload one frame may carry

	resp responder
	// trackers find where requests' params end; a stream holds one
	// while it holds its slot.
	trackers []*jsonrpc.Tracker

	begin   frame.Begin
	signal  frame.Signal
	beginEx mcp.McpBeginEx

	exB mcp.ExBuilders
}

// NewStream accepts every stream: the toolkit has no routes. A stream
// that is not an MCP stream it serves is refused by the consumer, with an
// McpResetEx error the server can relay.
func (h *Handler) NewStream(t frame.FrameType, buf []byte) engine.MessageConsumer {
	s := &stream{h: h, slot: engine.NoSlot}
	if !streams.Accept(&s.Stream, h.w, &h.begin, buf) {
		return nil
	}
	return s.onMessage
}

var (
	_ engine.Binding = Binding{}
	_ engine.Handler = (*Handler)(nil)
)
