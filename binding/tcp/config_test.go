package tcp_test

import (
	"errors"
	"fmt"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/tcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// startErr loads src and starts an engine on it, returning the first
// error: the schema's, or the binding's when it attaches.
func startErr(t *testing.T, src string) error {
	t.Helper()
	return enginetest.Check(t, "test.yaml", src, map[string]engine.Binding{"app0": enginetest.Refuse{}, "app1": enginetest.Refuse{}},
		engine.WithRingCapacity(1<<16))
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		src  string
		is   error
		want []string
	}{
		{name: "port out of range", src: tcpBinding("server", "port: 70000", "exit: app0"),
			is: tcp.ErrPort, want: []string{"test.yaml:7: bindings.net0.options.port", "70000 is out of range 1-65535"}},
		{name: "port zero", src: tcpBinding("server", "port: 0", "exit: app0"),
			is: tcp.ErrPort, want: []string{"0 is out of range 1-65535"}},
		{name: "backwards range", src: tcpBinding("server", `port: "9-1"`, "exit: app0"),
			is: tcp.ErrPort, want: []string{"9-1: the range ends before it starts"}},
		{name: "range out of range", src: tcpBinding("server", `port: "65000-70000"`, "exit: app0"),
			is: tcp.ErrPort, want: []string{"65000-70000 is out of range 1-65535"}},
		{name: "too many ports", src: tcpBinding("server", `port: "1000-3000"`, "exit: app0"),
			is: tcp.ErrPort, want: []string{"more than 1024 ports"}},
		{name: "port not a number", src: tcpBinding("server", `port: http`, "exit: app0"),
			want: []string{"bindings.net0.options.port"}},
		{name: "port list item", src: tcpBinding("server", "port: [8080, 0]", "exit: app0"),
			is: tcp.ErrPort, want: []string{"0 is out of range"}},
		{name: "server without port", src: tcpBinding("server", "host: 127.0.0.1", "exit: app0"),
			want: []string{`test.yaml:6: bindings.net0.options: missing required key "port"`}},
		{name: "server without options", src: tcpBinding("server", "", "exit: app0"),
			want: []string{`test.yaml:3: bindings.net0: missing required key "options"`}},
		{name: "client with two ports", src: tcpBinding("client", "port: [80, 81]"),
			is: tcp.ErrPort, want: []string{"a client connects to one port, not 2"}},
		{name: "server host name", src: tcpBinding("server", "host: example.com\nport: 8080", "exit: app0"),
			is: tcp.ErrHost, want: []string{"test.yaml:7: bindings.net0.options.host", `"example.com": a server listens on an IP address or localhost`}},
		{name: "client bad host", src: tcpBinding("client", "host: not a host!\nport: 80"),
			is: tcp.ErrHost, want: []string{`"not a host!": neither an IP address nor a host name`}},
		{name: "unknown steering", src: tcpBinding("server", "port: 8080\nsteering: magic", "exit: app0"),
			want: []string{"bindings.net0.options.steering"}},
		{name: "client steering", src: tcpBinding("client", "port: 80\nsteering: ebpf"),
			want: []string{"steering applies to a server's listeners"}},
		{name: "unknown option", src: tcpBinding("server", "port: 8080\nnodelayy: true", "exit: app0"),
			want: []string{"nodelayy"}},
		{name: "server without exit", src: tcpBinding("server", "port: 8080"),
			is: tcp.ErrNoExit, want: []string{"a server needs an exit or routes"}},
		{name: "bad cidr", src: tcpBinding("server", "port: 8080", "routes:", "  - exit: app0", "    when:", "      - cidr: 10.0.0.0/33"),
			is: tcp.ErrRoute, want: []string{`cidr "10.0.0.0/33"`}},
		{name: "bad route port", src: tcpBinding("server", "port: 8080", "routes:", "  - exit: app0", "    when:", "      - port: 0"),
			is: tcp.ErrRoute, want: []string{"0 is out of range"}},
		{name: "proxy kind", src: tcpBinding("proxy", "port: 8080", "exit: app0"),
			want: []string{"bindings.net0.kind"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := startErr(t, tc.src)
			require.Error(t, err)
			if tc.is != nil {
				assert.True(t, errors.Is(err, tc.is), "%v is not %v", err, tc.is)
			}
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestConfigPortInUse: a port another socket holds, without
// SO_REUSEPORT, fails the start with the address and the reason.
func TestConfigPortInUse(t *testing.T) {
	_, port := listenTCP(t)
	err := startErr(t, tcpBinding("server", serverOptions(port), "exit: app0"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("tcp: listen 127.0.0.1:%d: address already in use", port))
}

// TestConfigAccepted loads the forms the options take.
func TestConfigAccepted(t *testing.T) {
	p1, p2 := freePort(t), freePort(t)
	for _, options := range []string{
		fmt.Sprintf("host: localhost\nport: %d\nbacklog: 16\nnodelay: false\nkeepalive: true", p1),
		fmt.Sprintf("host: \"::1\"\nport: \"%d\"", p1),
		fmt.Sprintf("port: [%d, \"%d-%d\"]\nsteering: none", p1, p2, p2),
	} {
		require.NoError(t, startErr(t, tcpBinding("server", options, "exit: app0")), options)
	}
	require.NoError(t, startErr(t, tcpBinding("client", "host: db.example.com\nport: 5432")))
	require.NoError(t, startErr(t, tcpBinding("client", "")))
}

// TestConfigPortHeldWithReusePort: a port another SO_REUSEPORT socket of
// the same user holds (a second sluice, another server) also fails the
// start, rather than silently sharing its connections.
func TestConfigPortHeldWithReusePort(t *testing.T) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	require.NoError(t, unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1))
	require.NoError(t, unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	require.NoError(t, unix.Listen(fd, 8))
	sa, err := unix.Getsockname(fd)
	require.NoError(t, err)
	port := sa.(*unix.SockaddrInet4).Port
	err = startErr(t, tcpBinding("server", serverOptions(port), "exit: app0"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("tcp: listen 127.0.0.1:%d: address already in use", port))
}
