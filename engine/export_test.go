package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// InEpollWait reports whether a thread of the process is blocked in
// epoll_pwait on w's epoll instance, as /proc/self/task/*/syscall shows
// it: the worker has parked in the kernel, past Parked being set and the
// last look at its ring. For tests that need the wait itself, such as one
// that a stop of the world has to interrupt.
func InEpollWait(w *Worker) bool {
	want := fmt.Sprintf("%d %#x ", unix.SYS_EPOLL_PWAIT, w.poller.epfd)
	tasks, _ := filepath.Glob("/proc/self/task/*/syscall")
	for _, path := range tasks {
		if b, err := os.ReadFile(path); err == nil && strings.HasPrefix(string(b), want) {
			return true
		}
	}
	return false
}
