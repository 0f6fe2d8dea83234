package server

import "github.com/sluicehq/sluice/binding/mcp"

// deleteRequest is a DELETE, which ends its session (MCP.md §1.1; Zilla's
// McpShutdownHandler), or a request of a method the endpoint does not
// serve, answered 405 from its headers: neither takes anything of the
// request but its headers.
type deleteRequest struct {
	request
}

// setup makes a new DELETE serve as its request's role.
func (d *deleteRequest) setup(h *server) { d.init(h, d) }

// body drops the request's body.
func (d *deleteRequest) body(p []byte) { d.drain(p) }

// ended answers the complete request.
func (d *deleteRequest) ended() {
	if !d.answered() {
		d.deleteSession()
	}
}

func (d *deleteRequest) window() {}

func (d *deleteRequest) gone() {}

// release returns the request to the free list once it is done.
func (d *deleteRequest) release() { putRole(&d.request, &d.h.deletes, d) }

// deleteSession ends a session on DELETE (MCP.md §1.1).
func (d *deleteRequest) deleteSession() {
	h := d.h
	if d.hdr.ver == mcp.Version20260728 {
		d.methodNotAllowed()
		return
	}
	s := d.session()
	if s == nil || !d.versionOK() {
		return
	}
	if h.unpublish(s) {
		s.closed = true
		h.endSession(s) // first: requests out to the client end "Client session closed"
		h.cancelInflight(s)
	}
	d.respondEmpty(200)
}

// cancelInflight cancels the session's requests in flight, as
// notifications/cancelled cancels one: the client that ended the session
// waits for none of their answers, and their applications stop (Zilla's
// DELETE ends them too).
func (h *server) cancelInflight(s *session) {
	refs := h.refs[:0]
	for _, e := range s.inflight {
		refs = append(refs, e.ref)
	}
	h.refs = refs
	for _, ref := range refs {
		if ref.live() {
			ref.p.cancelled(ref.gen, ref.p.res.id)
		}
		ref.release()
	}
	clear(h.refs)
}
