package spec

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
)

type frameKind uint8

const (
	frameBegin frameKind = iota + 1
	frameData
	frameFlush
	frameEnd
	frameAbort
	frameReset
	frameWindow
	frameChallenge
	frameRedirect
)

var frameNames = [...]string{
	frameBegin: "BEGIN", frameData: "DATA", frameFlush: "FLUSH", frameEnd: "END",
	frameAbort: "ABORT", frameReset: "RESET", frameWindow: "WINDOW", frameChallenge: "CHALLENGE",
	frameRedirect: "REDIRECT",
}

func (k frameKind) String() string { return frameNames[k] }

// Data flags, as in core.idl.
const (
	flagFin        = 0x01
	flagInit       = 0x02
	flagIncomplete = 0x04
	flagSkip       = 0x08
)

// frame is one event a script stream exchanges with its peer. The fields a
// kind does not use stay zero. Window credit is incremental: each WINDOW
// adds credit bytes to what the writer may reserve.
type frame struct {
	kind          frameKind
	ext           []byte
	payload       []byte // DATA; nil is a null payload, empty a zero-length one
	flags         uint8  // DATA
	reserved      int    // DATA: payload plus the padding the writer was charged
	credit        int64  // WINDOW
	padding       int    // WINDOW
	budgetID      int64  // WINDOW, DATA
	capabilities  uint8  // WINDOW
	authorization int64  // any
	affinity      int64  // BEGIN, REDIRECT
	stream        int64  // the engine stream id it was received on, for messages
}

// queue is an unbounded mailbox of frames with a wake-up channel. Any
// goroutine may push; one stream runner takes.
type queue struct {
	mu     sync.Mutex
	frames []frame
	ready  chan struct{}
}

func newQueue() *queue { return &queue{ready: make(chan struct{}, 1)} }

func (q *queue) push(f frame) {
	q.mu.Lock()
	q.frames = append(q.frames, f)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take removes and returns every queued frame.
func (q *queue) take() []frame {
	q.mu.Lock()
	defer q.mu.Unlock()
	fs := q.frames
	q.frames = nil
	return fs
}

// conn is one stream between a script and its peer, over some network.
// send may be called from the stream's runner goroutine only.
type conn interface {
	// send delivers f to the peer, in order.
	send(ctx context.Context, f frame) error
	// inbox is where the peer's frames arrive.
	inbox() *queue
	// close releases the stream's resources once the script is done.
	close()
	// maxData is the most payload one DATA carrying an extension of ext
	// bytes may hold.
	maxData(ext int) int
}

// network opens script streams: a connect dials, an accept listens.
type network interface {
	// dial prepares a connect to uri; the BEGIN goes out with the first
	// frame sent.
	dial(ctx context.Context, uri string, o *streamOptions) (conn, error)
	// listen binds an accept on uri. Connections arrive in order.
	listen(uri string, o *streamOptions) (listener, error)
	// close releases whatever the network holds.
	close()
}

type listener interface {
	// accept returns the next connection, whose BEGIN is in its inbox.
	accept(ctx context.Context) (conn, error)
	close()
}

// memNetwork connects scripts to each other in memory (peer to peer).
type memNetwork struct {
	mu        sync.Mutex
	listeners map[string]*memListener
	changed   chan struct{} // closed and replaced when a listener binds
}

func newMemNetwork() *memNetwork {
	return &memNetwork{listeners: map[string]*memListener{}, changed: make(chan struct{})}
}

type memListener struct {
	n     *memNetwork
	uri   string
	conns chan *memConn
}

type memConn struct {
	in   *queue
	peer *memConn
}

func (c *memConn) send(_ context.Context, f frame) error {
	c.peer.in.push(f)
	return nil
}

func (c *memConn) inbox() *queue   { return c.in }
func (c *memConn) maxData(int) int { return math.MaxInt }
func (c *memConn) close()          {}

func (n *memNetwork) listen(uri string, _ *streamOptions) (listener, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, dup := n.listeners[uri]; dup {
		return nil, fmt.Errorf("%s is already accepted by another stream", uri)
	}
	l := &memListener{n: n, uri: uri, conns: make(chan *memConn, mailboxSize)}
	n.listeners[uri] = l
	close(n.changed)
	n.changed = make(chan struct{})
	return l, nil
}

// dial waits for a listener on uri, as both scripts start together.
func (n *memNetwork) dial(ctx context.Context, uri string, _ *streamOptions) (conn, error) {
	for {
		n.mu.Lock()
		l, ok := n.listeners[uri]
		changed := n.changed
		n.mu.Unlock()
		if ok {
			c := &memConn{in: newQueue()}
			s := &memConn{in: newQueue(), peer: c}
			c.peer = s
			select {
			case l.conns <- s:
				return c, nil
			default:
				return nil, fmt.Errorf("too many connections pending on %s", uri)
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("no script accepts %s", uri)
		}
	}
}

func (n *memNetwork) close() {}

func (l *memListener) accept(ctx context.Context) (conn, error) {
	for {
		select {
		case c := <-l.conns:
			// The connection is accepted once its BEGIN has arrived.
			return c, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (l *memListener) close() {}

// mailboxSize bounds the connections pending on one in-memory accept.
const mailboxSize = 4096

// streamName returns the binding name in zilla://streams/<name>, or "".
func streamName(uri string) string {
	name, ok := strings.CutPrefix(uri, "zilla://streams/")
	if !ok {
		return ""
	}
	return name
}
