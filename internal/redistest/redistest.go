// Package redistest starts a private redis-server for tests.
//
// Each [Server] is a redis-server process of its own on a free loopback
// port, with persistence off, killed by its PID when the test ends. Tests
// that exercise faults stop it with [Server.Stop] and bring it back on the
// same port with [Server.Restart].
//
//	srv := redistest.Start(t)
//	s, err := store.New("redis", "cache0", map[string]any{"url": srv.URL()}, nil)
//
// redis-server must be on PATH; .ci/peers.sh installs it. A test without it
// fails rather than skips, so a missing peer is never mistaken for a pass.
package redistest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

const (
	// startTimeout bounds the wait for a started server to answer PING.
	startTimeout = 10 * time.Second

	// bindAttempts bounds the retries when the picked port was taken by
	// someone else between picking and binding.
	bindAttempts = 5
)

// Server is one redis-server process on 127.0.0.1.
type Server struct {
	t    testing.TB
	bin  string
	port int

	mu   sync.Mutex
	cmd  *exec.Cmd
	exit chan struct{} // closed when cmd has been waited for
	logs *syncBuffer
}

// Start runs a redis-server on a free loopback port and waits until it
// answers PING. The server is killed when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server not installed: .ci/peers.sh installs it")
	}
	s := &Server{t: t, bin: bin}
	t.Cleanup(s.Stop)
	var last error
	for range bindAttempts {
		port, err := freePort()
		if err != nil {
			t.Fatalf("redistest: pick a port: %v", err)
		}
		s.port = port
		if last = s.start(); last == nil {
			return s
		}
	}
	t.Fatalf("redistest: start redis-server: %v", last)
	return nil
}

// Addr returns host:port of the server.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL returns the redis:// URL of the server's database 0.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Stop kills the server and waits for it to exit. Stopping a stopped
// server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exit
	s.cmd = nil
}

// Restart stops the server, if it runs, and starts a fresh one, with no
// data, on the same port.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	// The old process has exited, so its port is free unless another
	// process took it in between; retry briefly for TIME_WAIT-free reuse.
	var err error
	for range bindAttempts {
		if err = s.start(); err == nil {
			return
		}
	}
	s.t.Fatalf("redistest: restart redis-server on port %d: %v", s.port, err)
}

// start runs redis-server on s.port and waits for PING, or returns why it
// did not come up.
func (s *Server) start() error {
	logs := new(syncBuffer)
	cmd := exec.Command(s.bin,
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--protected-mode", "no",
	)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return err
	}
	exit := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exit)
	}()
	if err := waitPing(s.Addr(), exit); err != nil {
		_ = cmd.Process.Kill()
		<-exit
		return fmt.Errorf("%w\n%s", err, logs.String())
	}
	s.mu.Lock()
	s.cmd, s.exit, s.logs = cmd, exit, logs
	s.mu.Unlock()
	return nil
}

// waitPing polls addr with PING until it answers +PONG, the process exits,
// or startTimeout passes.
func waitPing(addr string, exit <-chan struct{}) error {
	deadline := time.Now().Add(startTimeout)
	retry := time.NewTicker(10 * time.Millisecond)
	defer retry.Stop()
	for {
		err := ping(addr)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no PONG from %s within %s: %w", addr, startTimeout, err)
		}
		select {
		case <-exit:
			return errors.New("redis-server exited at start")
		case <-retry.C:
		}
	}
}

// ping sends one inline PING and expects +PONG.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("unexpected reply %q", line)
	}
	return nil
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Logs returns what the server has written to stdout and stderr so far,
// for failure messages.
func (s *Server) Logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logs == nil {
		return ""
	}
	return s.logs.String()
}

// syncBuffer collects the server's output; exec copies into it from its
// own goroutine while Logs may read it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
