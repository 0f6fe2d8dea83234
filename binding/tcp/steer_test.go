package tcp_test

import (
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/tcp"
	"github.com/sluicehq/sluice/engine"
)

// steerConfig is a tcp server on port, steered by eBPF, to exit, and an
// echo binding.
func steerConfig(port int, exit string) string {
	return tcpBinding("server", serverOptions(port)+"\nsteering: ebpf", "exit: "+exit) + echoBinding
}

// with returns a binding resolver that uses b for tcp.
func with(b engine.Binding) func(string) (engine.Binding, error) {
	return func(typ string) (engine.Binding, error) {
		if typ == "tcp" {
			return b, nil
		}
		return binding.Factory(typ)
	}
}

// TestSteeringFallback: a kernel that refuses the steering program gets
// one warning for the group, not one per worker, and the listeners go on
// as a plain SO_REUSEPORT group.
func TestSteeringFallback(t *testing.T) {
	rec := &logRecorder{}
	b := tcp.NewBindingRefusingSteering(errors.New("operation not permitted"))
	port := freePort(t)
	e := startEngine(t, steerConfig(port, "echo0"), engineOptions{workers: 2, bindings: with(b), logger: slog.New(rec)})
	warnings := rec.matching("eBPF steering unavailable")
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "WARN")
	assert.Contains(t, warnings[0], "operation not permitted")
	assert.False(t, tcp.Steering(b, e, "net0", uint16(port)))
	for i := range 20 {
		require.NoError(t, echoOnce(port, pattern(100+i, byte(i))))
	}
}

// TestSteeringEBPF loads the SK_REUSEPORT program, and checks that a
// connection made from a thread pinned to CPU c is accepted by worker
// c % workers. Loading needs CAP_BPF (or CAP_SYS_ADMIN) and a kernel
// with SK_REUSEPORT programs (4.19); where the kernel refuses, only that
// assertion is skipped, and the fallback is checked instead.
func TestSteeringEBPF(t *testing.T) {
	rec := &logRecorder{}
	b := &tcp.Binding{}
	port := freePort(t)
	a := newApp("app0", 8192)
	const workers = 2
	e := startEngine(t, steerConfig(port, "app0"), engineOptions{
		workers: workers, bindings: with(b), logger: slog.New(rec),
		external: map[string]engine.Binding{"app0": a},
	})
	if !tcp.Steering(b, e, "net0", uint16(port)) {
		warnings := rec.matching("eBPF steering unavailable")
		require.Len(t, warnings, 1, "a refused program is logged once")
		for i := range 4 {
			c := dial(t, port)
			a.accept(t)
			require.NoError(t, c.Close())
			_ = i
		}
		t.Skipf("the kernel refused eBPF steering (%s): the steered-worker assertion is skipped, the plain SO_REUSEPORT fallback works",
			strings.TrimSpace(warnings[0]))
	}
	require.Len(t, rec.matching("eBPF steering loaded"), 1)
	assert.Empty(t, rec.matching("not attached"))

	cpus := allowedCPUs(t)
	require.NotEmpty(t, cpus)
	for _, cpu := range cpus {
		for range 8 {
			fd, err := dialFrom(cpu, port)
			require.NoError(t, err)
			select {
			case w := <-a.workers:
				assert.Equal(t, cpu%workers, w, "a connection from CPU %d", cpu)
			case <-time.After(5 * time.Second):
				t.Fatal("timed out waiting for the stream")
			}
			a.accept(t)
			_ = unix.Close(fd)
		}
	}
}

func allowedCPUs(t *testing.T) []int {
	t.Helper()
	var set unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &set))
	var cpus []int
	for cpu := 0; cpu < 1024 && len(cpus) < set.Count(); cpu++ {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpus
}

// dialFrom connects to the loopback port from a thread pinned to cpu, so
// that the kernel receives the connection on that CPU: on loopback the SYN
// is processed on the sending CPU.
func dialFrom(cpu, port int) (int, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, one unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return -1, err
	}
	one.Set(cpu)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		return -1, err
	}
	defer func() { _ = unix.SchedSetaffinity(0, &old) }()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return -1, err
	}
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		_ = unix.Close(fd)
		return -1, err
	}
	return fd, nil
}
