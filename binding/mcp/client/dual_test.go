package client_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestDualUpstreamSessions: an upstream whose server/discover lists
// 2026-07-28 and 2025-11-25 gives each 2025-era downstream session a 2025
// upstream session when its initialize answer names one, so that the
// session's calls carry its id. When the answer names none, the upstream
// keeps no 2025 session, and the calls go at 2026-07-28 instead (Mcp-Method,
// no session id), the next session's too, without another initialize.
func TestDualUpstreamSessions(t *testing.T) {
	for _, withSession := range []bool{true, false} {
		t.Run(fmt.Sprintf("session=%v", withSession), func(t *testing.T) {
			var mu sync.Mutex
			var seen []string // per request: method, session id, Mcp-Method header
			server := serveGetUpstream(t, func(w http.ResponseWriter, r *http.Request, msg, id string) {
				if r.Method != http.MethodPost {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				method := between(msg, `"method":"`, `"`)
				mu.Lock()
				seen = append(seen, method+" sid="+r.Header.Get("Mcp-Session-Id")+" m="+r.Header.Get("Mcp-Method"))
				mu.Unlock()
				switch method {
				case "server/discover":
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}},"serverInfo":{"name":"dual","version":"1"}}}`, id)
				case "initialize":
					sid := ""
					if withSession {
						sid = "s1"
					}
					answerInitialize(w, id, sid)
				case "tools/call":
					answerOK(w, id)
				default:
					w.WriteHeader(http.StatusAccepted)
				}
			})
			endpoint := startGateway(t, server, "      versions: [2026-07-28, 2025-11-25]\n")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for range 2 {
				s := connect(t, ctx, endpoint, "2025-11-25", nil)
				assert.Equal(t, "ok", callText(t, ctx, s, "t", nil))
				s.Close()
			}

			mu.Lock()
			defer mu.Unlock()
			var inits, calls []string
			for _, r := range seen {
				switch {
				case strings.HasPrefix(r, "initialize "):
					inits = append(inits, r)
				case strings.HasPrefix(r, "tools/call "):
					calls = append(calls, r)
				}
			}
			if withSession {
				assert.Len(t, inits, 2, "%q", seen)
				assert.Equal(t, []string{"tools/call sid=s1 m=", "tools/call sid=s1 m="}, calls, "%q", seen)
			} else {
				assert.Len(t, inits, 1, "%q", seen)
				assert.Equal(t, []string{"tools/call sid= m=tools/call", "tools/call sid= m=tools/call"}, calls, "%q", seen)
			}
		})
	}
}
