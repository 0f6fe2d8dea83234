package client

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testCodec() *stateCodec {
	return &stateCodec{key: bytes.Repeat([]byte{7}, 32)}
}

var stateNow = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

func TestStateRoundTrip(t *testing.T) {
	k := testCodec()
	for _, s := range []reqState{
		{kind: statePending, instance: 0xfeedface12345678, handle: 42, callID: 9, round: 3, expiry: stateNow.Add(time.Minute).UnixMilli()},
		{kind: stateReplay, callID: -1, expiry: stateNow.Add(time.Second).UnixMilli()},
		{kind: stateUpstream, callID: 1, expiry: stateNow.Add(time.Hour).UnixMilli(), inner: []byte("round=2;name=Alice")},
	} {
		enc := k.encode(nil, &s, []byte("alice"))
		for _, c := range enc {
			assert.True(t, c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z', "base64url: %q", enc)
		}
		got, err := k.decode(enc, []byte("alice"), stateNow)
		require.NoError(t, err)
		assert.Equal(t, s.kind, got.kind)
		assert.Equal(t, s.instance, got.instance)
		assert.Equal(t, s.handle, got.handle)
		assert.Equal(t, s.callID, got.callID)
		assert.Equal(t, s.round, got.round)
		assert.Equal(t, s.expiry, got.expiry)
		assert.Equal(t, string(s.inner), string(got.inner))
	}
}

const base64URLAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

func TestStateRefused(t *testing.T) {
	k := testCodec()
	s := reqState{kind: statePending, handle: 1, callID: 2, round: 1, expiry: stateNow.Add(time.Minute).UnixMilli()}
	enc := k.encode(nil, &s, []byte("alice"))
	raw, err := base64.RawURLEncoding.DecodeString(string(enc))
	require.NoError(t, err)

	flipped := bytes.Clone(raw)
	flipped[11] ^= 1 // the handle
	otherInstance := bytes.Clone(raw)
	otherInstance[2] ^= 1 // the issuing instance
	forgedMAC := bytes.Clone(raw)
	forgedMAC[len(forgedMAC)-1] ^= 1
	withInner := k.encode(nil, &reqState{kind: stateUpstream, expiry: s.expiry, inner: []byte("round=1")}, []byte("alice"))
	rawInner, err := base64.RawURLEncoding.DecodeString(string(withInner))
	require.NoError(t, err)
	// The last character of enc with its unused bits set: the same bytes,
	// spelled another way.
	respelled := bytes.Clone(enc)
	respelled[len(respelled)-1] = base64URLAlphabet[strings.IndexByte(base64URLAlphabet, respelled[len(respelled)-1])|1]
	other := &stateCodec{key: bytes.Repeat([]byte{8}, 32)}

	for _, tt := range []struct {
		name      string
		k         *stateCodec
		enc       []byte
		principal string
		now       time.Time
		want      error
	}{
		{"altered field", k, b64(flipped), "alice", stateNow, errStateForged},
		{"forged mac", k, b64(forgedMAC), "alice", stateNow, errStateForged},
		{"altered instance", k, b64(otherInstance), "alice", stateNow, errStateForged},
		{"another key", other, enc, "alice", stateNow, errStateForged},
		{"wrong principal", k, enc, "bob", stateNow, errStateForged},
		{"no principal", k, enc, "", stateNow, errStateForged},
		{"expired", k, enc, "alice", stateNow.Add(time.Minute), errStateExpired},
		{"truncated", k, enc[:len(enc)-5], "alice", stateNow, errStateMalformed},
		{"cut mac", k, b64(rawInner[:len(rawInner)-3]), "alice", stateNow, errStateForged},
		{"too short", k, b64(raw[:stateFixed]), "alice", stateNow, errStateMalformed},
		{"tampered suffix", k, b64(append(bytes.Clone(raw), "-TAMPERED"...)), "alice", stateNow, errStateForged},
		{"non-zero unused bits", k, respelled, "alice", stateNow, errStateMalformed},
		{"suffix of another spelling", k, append(bytes.Clone(enc), "-TAMPERED"...), "alice", stateNow, errStateMalformed},
		{"garbage", k, []byte("not base64 at all!"), "alice", stateNow, errStateMalformed},
		{"empty", k, nil, "alice", stateNow, errStateMalformed},
		{"huge", k, bytes.Repeat([]byte("A"), 200<<10), "alice", stateNow, errStateMalformed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.k.decode(tt.enc, []byte(tt.principal), tt.now)
			assert.ErrorIs(t, err, tt.want)
		})
	}
}

// TestStateUnknownKind: a state with a valid MAC but a kind or version
// this gateway does not issue is malformed, not trusted.
func TestStateUnknownKind(t *testing.T) {
	k := testCodec()
	s := reqState{kind: 9, expiry: stateNow.Add(time.Minute).UnixMilli()}
	_, err := k.decode(k.encode(nil, &s, nil), nil, stateNow)
	assert.ErrorIs(t, err, errStateMalformed)
}

func b64(raw []byte) []byte { return []byte(base64.RawURLEncoding.EncodeToString(raw)) }

// FuzzStateDecode: decoding never panics, and what it accepts it issued.
func FuzzStateDecode(f *testing.F) {
	k := testCodec()
	s := reqState{kind: statePending, handle: 1, callID: 2, round: 1, expiry: stateNow.Add(time.Minute).UnixMilli()}
	f.Add(k.encode(nil, &s, nil))
	f.Add([]byte("AQEAAAAAAAAAAQ"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, enc []byte) {
		got, err := k.decode(enc, nil, stateNow)
		if err != nil {
			return
		}
		again := k.encode(nil, &got, nil)
		if !bytes.Equal(again, enc) {
			t.Fatalf("accepted %q, which encodes as %q", enc, again)
		}
	})
}
