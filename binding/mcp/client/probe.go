package client

import (
	"log/slog"
	"net"
	"time"
)

// probeTimeout bounds the connection attempt of the start-up probe.
const probeTimeout = 2 * time.Second

// probeUpstream tries, off the worker's thread, to open a TCP connection
// to the upstream's authority, and warns when it cannot: sessions started
// while the upstream is down leave it out (a proxy in front opens their
// part again on their next use of it), and the warning at start says why
// before the first client does.
func probeUpstream(log *slog.Logger, binding, server, authority string) {
	go func() {
		conn, err := net.DialTimeout("tcp", authority, probeTimeout)
		if err == nil {
			_ = conn.Close()
		} else {
			log.Warn("mcp client: the upstream cannot be reached; sessions will leave it out until it can",
				"binding", binding, "server", server, "error", err)
		}
	}()
}
