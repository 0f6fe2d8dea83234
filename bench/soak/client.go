package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

const protocolVersion = "2025-11-25"

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// reply is an HTTP answer to a POST and the JSON-RPC response in it.
type reply struct {
	status  int
	header  http.Header
	session string
	result  json.RawMessage
	err     *rpcError
}

// client posts JSON-RPC messages to the gateway, each on a connection of
// its own, so that no keep-alive connection outlives the gateway's idle
// timeout between two uses.
type client struct {
	url     string
	http    *http.Client
	session string
}

func newClient(url string) *client {
	return newClientFrom(url, nil)
}

// newClientFrom is newClient whose connections come from the loopback
// address src (127.0.0.0/8 is all local), or any when src is nil.
func newClientFrom(url string, src net.IP) *client {
	t := &http.Transport{DisableKeepAlives: true}
	if src != nil {
		t.DialContext = (&net.Dialer{LocalAddr: &net.TCPAddr{IP: src}}).DialContext
	}
	return &client{url: url, http: &http.Client{Transport: t}}
}

// post sends body; with the session once it has one. A JSON answer is
// read whole; an event stream up to the event that answers the request.
func (c *client) post(ctx context.Context, body string) (reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, header: resp.Header, session: resp.Header.Get("Mcp-Session-Id")}
	var msg []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		msg, err = answerEvent(resp.Body, nil)
	} else {
		msg, err = io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	}
	if err != nil {
		return r, err
	}
	if len(bytes.TrimSpace(msg)) == 0 {
		return r, nil
	}
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return r, fmt.Errorf("HTTP %d: not JSON-RPC: %.80q", r.status, msg)
	}
	r.result, r.err = m.Result, m.Error
	return r, nil
}

// answerEvent reads an event stream up to the first event that carries a
// result or an error; onNotice, when set, is called for each other event.
func answerEvent(body io.Reader, onNotice func()) ([]byte, error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
			continue
		}
		if len(line) != 0 || len(data) == 0 {
			continue
		}
		var m struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(data, &m) == nil && (m.Result != nil || m.Error != nil) {
			return data, nil
		}
		if onNotice != nil {
			onNotice()
		}
		data = data[:0]
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("event stream ended without an answer")
}

// initialize opens a session: initialize, then notifications/initialized.
func (c *client) initialize(ctx context.Context) (reply, error) {
	r, err := c.post(ctx, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+protocolVersion+`","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}}`)
	if err != nil {
		return r, err
	}
	if r.status != 200 || r.err != nil || r.session == "" {
		return r, fmt.Errorf("initialize: %s", describe(r))
	}
	c.session = r.session
	n, err := c.post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return r, err
	}
	if n.status != 202 {
		return r, fmt.Errorf("notifications/initialized: HTTP %d", n.status)
	}
	return r, nil
}

// end deletes the session.
func (c *client) end(ctx context.Context) {
	if c.session == "" {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
	if err != nil {
		return
	}
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	if resp, err := c.http.Do(req); err == nil {
		resp.Body.Close()
	}
	c.session = ""
}

// call is a tools/call of tool with arguments (a JSON object).
func (c *client) call(ctx context.Context, id int, tool, arguments string) (reply, error) {
	return c.post(ctx, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, arguments))
}

// describe is a reply in a few words.
func describe(r reply) string {
	s := fmt.Sprintf("HTTP %d", r.status)
	if r.err != nil {
		s += fmt.Sprintf(" %d %q", r.err.Code, r.err.Message)
	}
	return s
}

// probe is the health check: a session, then an echo through each route,
// all within probeTimeout.
func probe(g *gateway) (bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	t0 := time.Now()
	c := newClient(g.url)
	if _, err := c.initialize(ctx); err != nil {
		return false, err.Error()
	}
	defer c.end(context.Background())
	// The toolkit's echo takes message, the upstream's text.
	for i, tool := range []string{"local__echo", "up__echo"} {
		r, err := c.call(ctx, i+1, tool, `{"message":"probe","text":"probe"}`)
		if err != nil {
			return false, tool + ": " + err.Error()
		}
		if r.status != 200 || r.err != nil || !bytes.Contains(r.result, []byte("probe")) {
			return false, fmt.Sprintf("%s: %s %.60s", tool, describe(r), r.result)
		}
	}
	return true, time.Since(t0).Round(time.Millisecond).String()
}
