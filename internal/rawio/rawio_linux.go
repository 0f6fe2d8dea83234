// Package rawio makes the system calls of a worker's hot path without
// telling the Go scheduler: reads and writes on non-blocking sockets,
// epoll_wait with a zero timeout, and a parked worker's epoll_wait.
//
// A plain syscall.Syscall marks the thread as in a system call; if the
// call takes more than ~20 µs (a loopback write runs the receiving side's
// TCP stack too) the runtime's monitor hands the worker's P to another
// thread, and taking it back on return costs futex wake-ups on both sides.
// A worker thread is locked to its goroutine and makes these calls
// thousands of times a second, so those hand-offs became most of a busy
// gateway's CPU. RawSyscall skips the bookkeeping. It is safe for calls
// that cannot block, and for the one blocking call [EpollWait] documents;
// anything else that may block (connect, close) keeps going through
// x/sys/unix.
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
	return result(unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p))))
}

// Write writes to a non-blocking fd.
func Write(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return result(unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p))))
}

// Recv reads from a non-blocking socket: recvfrom(2) without an address,
// which goes to the socket layer directly where read(2) goes through the
// VFS first (the file position lock, the area check, fsnotify). perf had
// vfs_read, vfs_write and fdget_pos at 3.5 % of a gateway's CPU.
func Recv(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return result(unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), 0, 0, 0))
}

// Send writes to a non-blocking socket: sendto(2) without an address
// (see Recv), with MSG_NOSIGNAL, so that a peer that has gone reports
// EPIPE without raising SIGPIPE.
func Send(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return result(unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), unix.MSG_NOSIGNAL, 0, 0))
}

// result turns a raw system call's return into a byte count and error.
func result(n, _ uintptr, errno unix.Errno) (int, error) {
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

// EpollWait is epoll_wait with a timeout (-1: until an event), made without
// telling the scheduler: the calling thread keeps its P while it blocks.
// It is meant for a worker parking on its own thread, and it is safe only
// because of two properties the engine keeps:
//
//   - the runtime can still stop the thread: preemption (for a stop of
//     the world, or sysmon's 10 ms slice) signals it with SIGURG, and
//     epoll_wait returns EINTR on any signal whatever SA_RESTART says, so
//     the worker comes back to Go code, where the preemption happens
//     (a runtime started with GODEBUG=asyncpreemptoff=1 sends no such
//     signal: the engine then waits with [EpollWaitScheduled]);
//   - the engine keeps GOMAXPROCS above its number of workers, so a parked
//     worker holding its P never starves the runtime's other goroutines.
//
// Going through the scheduler instead made sysmon hand the parked P to
// another thread after 20 µs and the worker take it back on waking, which
// with sysmon's own wake-ups was a third of a busy gateway's context
// switches.
func EpollWait(epfd int, events []unix.EpollEvent, timeoutMs int) (int, error) {
	if len(events) == 0 {
		return 0, nil
	}
	n, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])),
		uintptr(len(events)), uintptr(timeoutMs), 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}

// EpollWaitScheduled is [EpollWait] made as an ordinary Go system call: the
// thread gives up its P while it blocks, so the runtime needs no signal to
// stop the world around it. It is for a runtime that cannot preempt by
// signal (GODEBUG=asyncpreemptoff=1), where a wait holding its P would
// hold up every garbage collection until the next event.
func EpollWaitScheduled(epfd int, events []unix.EpollEvent, timeoutMs int) (int, error) {
	if len(events) == 0 {
		return 0, nil
	}
	n, _, errno := unix.Syscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])),
		uintptr(len(events)), uintptr(timeoutMs), 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}
