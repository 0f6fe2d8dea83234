package server_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/internal/enginetest"
)

// FuzzServerConn writes fuzzed bytes into the server as one connection,
// split into DATA frames at points drawn from split, and then ends it, as
// TestServerGarbledRequests does with its own mutations: routes as there
// (/a* refused, /b* echoed, the rest 404), and X-Route: c echoed too.
// Whatever the bytes, the server answers with well-formed response heads
// or closes without one, ends its side of the connection, and gives back
// every slot and stream it held.
func FuzzServerConn(f *testing.F) {
	for i, s := range garbleSeeds {
		f.Add([]byte(s), uint64(i))
	}
	e, err := startServerEngine(f, "name: test\nbindings:\n  net0:\n    type: http\n    kind: server\n"+
		"    options:\n      limits:\n        body: 4096\n"+
		"    routes:\n      - exit: driver\n        when:\n          - headers:\n              :path: /a*\n"+
		"      - exit: echo0\n        when:\n          - headers:\n              :path: /b*\n"+
		"      - exit: echo0\n        when:\n          - headers:\n              x-route: c\n"+
		"  echo0:\n    type: echo\n    kind: server\n")
	require.NoError(f, err)
	// A route's header, read once: given twice, the request is refused.
	f.Add([]byte("GET /c HTTP/1.1\r\nHost: x\r\nX-Route: c\r\nx-route: c\r\n\r\nGET /c HTTP/1.1\r\nHost: x\r\nX-Route: c\r\n\r\n"), uint64(1))
	f.Fuzz(func(t *testing.T, input []byte, split uint64) {
		c := runInput(t, e, int(split%2), input, rand.New(rand.NewPCG(split, 0x5eed)))
		c.check(t)
		require.Eventually(t, func() bool { return enginetest.Released(e) }, 2*time.Second, time.Millisecond,
			"buffer slots or streams still held after input %s", quoteInput(input))
	})
}
