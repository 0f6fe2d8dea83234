package server

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
)

func TestRewriteStateRoundTrip(t *testing.T) {
	tests := []struct{ name, in, out string }{
		{"state first", "https://a.example/authorize?state=7f3a&redirect_uri=x",
			"https://a.example/authorize?state=s1.e1.7f3a&redirect_uri=x"},
		{"state last", "https://a.example/authorize?client_id=c&state=7f3a",
			"https://a.example/authorize?client_id=c&state=s1.e1.7f3a"},
		{"state before a fragment", "https://a.example/authorize?state=7f3a#top",
			"https://a.example/authorize?state=s1.e1.7f3a#top"},
		{"not a prefix of another name", "https://a.example/a?xstate=1&state=2",
			"https://a.example/a?xstate=1&state=s1.e1.2"},
		{"no state", "https://a.example/authorize?client_id=c",
			"https://a.example/authorize?client_id=c&state=s1.e1."},
		{"no query", "https://a.example/authorize",
			"https://a.example/authorize?state=s1.e1."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rewriteState(nil, []byte(tt.in), "s1", []byte("e1"))
			assert.Equal(t, tt.out, string(got))
			if _, _, ok := mcp.QueryParamSpan([]byte(tt.in), "state"); ok {
				assert.Equal(t, tt.in, string(stripState(nil, got, len("s1.e1."))))
			}
		})
	}
}

func TestBrokered(t *testing.T) {
	cb := []byte("http://localhost:8080/mcp/auth/callback")
	assert.True(t, brokered([]byte("https://p/a?state=1&redirect_uri=http%3A%2F%2Flocalhost%3A8080%2Fmcp%2Fauth%2Fcallback"), cb))
	assert.False(t, brokered([]byte("https://p/a?state=1&redirect_uri=http%3A%2F%2Fevil.example%2Fcb"), cb))
	assert.False(t, brokered([]byte("https://p/a?state=1"), cb), "no redirect_uri: the upstream serves its own callback")
	assert.False(t, brokered([]byte("https://p/a?redirect_uri="), nil), "no callback URL of the binding's")
	assert.False(t, brokered([]byte("https://p/a?redirect_uri=%zz"), cb), "a malformed escape")
}

func TestPlainID(t *testing.T) {
	assert.True(t, plainID([]byte("elicit-1_~")))
	for _, id := range []string{"", "a.b", "a&b", "a=b", "a b", "é"} {
		assert.False(t, plainID([]byte(id)), id)
	}
}

// TestFindElicitOwnSession checks that a callback completes only the
// elicitation its state names, in the session it names, with the state
// the upstream made, and only once.
func TestFindElicitOwnSession(t *testing.T) {
	h := &server{table: newSessionTable(0, nil)}
	a := &session{id: "sess-a"}
	b := &session{id: "sess-b"}
	h.table.add(a)
	h.table.add(b)
	e := &elicitation{id: "elicit-1", state: "7f3a"}
	require.True(t, a.addElicit(e))
	assert.False(t, a.addElicit(&elicitation{id: "elicit-1"}), "an id pending already")
	for i := 0; i < maxClientRequests; i++ {
		require.True(t, b.addElicit(&elicitation{id: fmt.Sprint("e", i)}))
	}
	assert.False(t, b.addElicit(&elicitation{id: "one-more"}), "a session's pending elicitations are bounded")

	cb := func(state string) []byte { return []byte("http://localhost/mcp/auth/callback?code=x&state=" + state) }
	for _, state := range []string{
		"sess-b.elicit-1.7f3a", // another session
		"sess-a.elicit-1.other",
		"sess-a.elicit-2.7f3a",
		"sess-a.elicit-1",
		"sess-a",
		"",
		".elicit-1.7f3a",
		"nosuch.elicit-1.7f3a",
	} {
		got, _ := h.findElicit(cb(state))
		assert.Nil(t, got, state)
	}
	got, s := h.findElicit(cb("sess-a.elicit-1.7f3a"))
	require.Same(t, e, got)
	require.Same(t, a, s)

	// The session's lifecycle is gone: the callback cannot be delivered,
	// but the elicitation is spent all the same.
	assert.False(t, h.elicitCallback(s, e, cb("sess-a.elicit-1.7f3a")))
	got, _ = h.findElicit(cb("sess-a.elicit-1.7f3a"))
	assert.Nil(t, got, "an elicitation completes once")
}

func TestFindElicitDottedSessionID(t *testing.T) {
	h := &server{table: newSessionTable(0, nil)}
	s := &session{id: "session-1.0"}
	h.table.add(s)
	e := &elicitation{id: "e", state: "a.b"}
	require.True(t, s.addElicit(e))
	got, _ := h.findElicit([]byte("http://h/cb?state=session-1.0.e.a.b"))
	assert.Same(t, e, got)
}

// FuzzCallbackState feeds the state and callback parsing arbitrary URLs:
// none panics, a rewritten state strips back to the URL, and only the
// one registered state finds the elicitation.
func FuzzCallbackState(f *testing.F) {
	for _, u := range []string{
		"http://localhost:8080/mcp/auth/callback?code=xyz&state=sess-a.elicit-1.7f3a9b1c",
		"http://localhost:8080/mcp/auth/callback?error=access_denied&state=sess-a.unknown",
		"https://a.example/authorize?state=7f3a&redirect_uri=http%3A%2F%2Flocalhost%2Fcb#f",
		"?state=&state=.&&=",
	} {
		f.Add(u)
	}
	h := &server{table: newSessionTable(0, nil)}
	s := &session{id: "sess-a"}
	h.table.add(s)
	e := &elicitation{id: "elicit-1", state: "7f3a9b1c"}
	s.addElicit(e)
	f.Fuzz(func(t *testing.T, u string) {
		b := []byte(u)
		mcp.QueryParam(b, "state")
		brokered(b, []byte("http://localhost/cb"))
		start, end, ok := mcp.QueryParamSpan(b, "state")
		if ok {
			if start > end || end > len(b) {
				t.Fatalf("state span %d:%d of %d bytes", start, end, len(b))
			}
			r := rewriteState(nil, b, "sess-a", []byte("elicit-1"))
			if got := stripState(nil, r, len("sess-a.elicit-1.")); !bytes.Equal(got, b) {
				t.Fatalf("strip(rewrite(%q)) = %q", u, got)
			}
		}
		if got, _ := h.findElicit(b); got != nil {
			st, _ := mcp.QueryParam(b, "state")
			if string(st) != "sess-a.elicit-1.7f3a9b1c" {
				t.Fatalf("state %q found the elicitation", st)
			}
		}
	})
}
