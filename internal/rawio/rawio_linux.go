// Package rawio makes the system calls of a worker's hot path that never
// block without telling the Go scheduler: reads and writes on non-blocking
// sockets and epoll_wait with a zero timeout.
//
// A plain syscall.Syscall marks the thread as in a system call; if the
// call takes more than ~20 µs (a loopback write runs the receiving side's
// TCP stack too) the runtime's monitor hands the worker's P to another
// thread, and taking it back on return costs futex wake-ups on both sides.
// A worker thread is locked to its goroutine and makes these calls
// thousands of times a second, so those hand-offs became most of a busy
// gateway's CPU. RawSyscall skips the bookkeeping. It is only safe for
// calls that cannot block: a blocking call made raw would hold the P and
// stall garbage collection. Anything that may block (epoll_wait with a
// timeout, connect, close) keeps going through x/sys/unix.
package rawio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Read reads from a non-blocking fd.
func Read(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}

// Write writes to a non-blocking fd.
func Write(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}

// EpollPoll is epoll_wait with a zero timeout: it returns at once.
func EpollPoll(epfd int, events []unix.EpollEvent) (int, error) {
	if len(events) == 0 {
		return 0, nil
	}
	n, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])),
		uintptr(len(events)), 0, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}
