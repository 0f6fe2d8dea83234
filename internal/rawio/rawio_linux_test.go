package rawio

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// Send and Recv on a non-blocking socket pair: bytes go across, an empty
// socket reports EAGAIN, and a send to a closed peer reports EPIPE rather
// than raising SIGPIPE (which would end the test process).
func TestSendRecv(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := fds[0], fds[1]
	defer unix.Close(a)
	var buf [16]byte
	if _, err := Recv(b, buf[:]); !errors.Is(err, unix.EAGAIN) {
		t.Fatalf("recv on an empty socket: %v, want EAGAIN", err)
	}
	if n, err := Send(a, []byte("hello")); err != nil || n != 5 {
		t.Fatalf("send: %d, %v", n, err)
	}
	if n, err := Recv(b, buf[:]); err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("recv: %q, %v", buf[:n], err)
	}
	if n, err := Send(a, nil); n != 0 || err != nil {
		t.Fatalf("empty send: %d, %v", n, err)
	}
	unix.Close(b)
	if _, err := Send(a, []byte("x")); !errors.Is(err, unix.EPIPE) {
		t.Fatalf("send to a closed peer: %v, want EPIPE", err)
	}
	if n, err := Recv(a, buf[:]); n != 0 || err != nil {
		t.Fatalf("recv after the peer closed: %d, %v, want 0 (EOF)", n, err)
	}
}
