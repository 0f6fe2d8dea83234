package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"time"
)

// The requestState the client kind issues to a 2026-07-28 client when it
// turns a 2025 upstream's request to its client into an input_required
// round (see reverse.go). It is opaque to the client and integrity
// protected: the fixed fields, then an HMAC-SHA256 over them and the
// principal the request came with, all base64url without padding.
//
//	version (1) kind (1) instance (8) handle (8) callID (8) round (4) expiry ms (8) inner … mac (32)
//
// instance is the issuing instance's id (shared.instanceID): with a key
// shared through a store a state verifies on every instance, but the
// upstream call a pending state continues is held open only in the one
// that issued it.

const (
	stateVersion = 2
	stateFixed   = 1 + 1 + 8 + 8 + 8 + 4 + 8
	stateMAC     = sha256.Size
	// maxInnerState bounds an upstream's own requestState the gateway
	// wraps.
	maxInnerState = 64 << 10
)

// The kinds of state.
const (
	// statePending names a call held open upstream (a pending entry).
	statePending uint8 = 1
	// stateReplay follows a -32042 turned into input_required: the retry
	// goes upstream again as a new call, without the state.
	stateReplay uint8 = 2
	// stateUpstream wraps the requestState of an input_required result
	// the upstream sent itself; the retry carries it upstream byte-exact.
	stateUpstream uint8 = 3
)

// reqState is a decoded requestState.
type reqState struct {
	kind     uint8
	instance uint64 // the issuing instance
	handle   uint64 // the pending call (statePending)
	callID   int64  // the upstream JSON-RPC id of the call
	round    uint32 // the round the state answers; one use
	expiry   int64  // Unix ms
	inner    []byte // the upstream's own state (stateUpstream)
}

// Why a requestState is refused; the message goes in the error's data.
var (
	errStateMalformed = errors.New("malformed")
	errStateForged    = errors.New("integrity check failed (forged, altered or issued to another principal)")
	errStateExpired   = errors.New("expired")
	errStateElsewhere = errors.New("issued by another instance of the gateway, which holds the upstream call it continues: send the retry to that instance")
)

// stateCodec issues and verifies states with one key.
type stateCodec struct {
	key []byte
}

// encode appends s, bound to principal, in base64url to dst.
func (k *stateCodec) encode(dst []byte, s *reqState, principal []byte) []byte {
	raw := make([]byte, 0, stateFixed+len(s.inner)+stateMAC)
	raw = append(raw, stateVersion, s.kind)
	raw = binary.BigEndian.AppendUint64(raw, s.instance)
	raw = binary.BigEndian.AppendUint64(raw, s.handle)
	raw = binary.BigEndian.AppendUint64(raw, uint64(s.callID))
	raw = binary.BigEndian.AppendUint32(raw, s.round)
	raw = binary.BigEndian.AppendUint64(raw, uint64(s.expiry))
	raw = append(raw, s.inner...)
	raw = k.mac(raw, raw, principal)
	return base64.RawURLEncoding.AppendEncode(dst, raw)
}

// mac appends the HMAC of body and principal to dst.
func (k *stateCodec) mac(dst, body, principal []byte) []byte {
	m := hmac.New(sha256.New, k.key)
	m.Write(body)
	// The principal's length first, so that body and principal cannot
	// trade bytes.
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(principal)))
	m.Write(n[:])
	m.Write(principal)
	return m.Sum(dst)
}

// decode verifies enc, a state this codec issued to principal, and that
// it has not expired at now. Single use is the pending table's to check.
func (k *stateCodec) decode(enc, principal []byte, now time.Time) (reqState, error) {
	var s reqState
	if len(enc) > base64.RawURLEncoding.EncodedLen(stateFixed+maxInnerState+stateMAC) {
		return s, errStateMalformed
	}
	// The decoder skips CR and LF: a state with them would be a second
	// spelling of one the codec issued. Only the alphabet is taken.
	for _, c := range enc {
		if !base64URLByte(c) {
			return s, errStateMalformed
		}
	}
	raw, err := strictBase64.AppendDecode(nil, enc)
	if err != nil || len(raw) < stateFixed+stateMAC {
		return s, errStateMalformed
	}
	body, sum := raw[:len(raw)-stateMAC], raw[len(raw)-stateMAC:]
	if !hmac.Equal(k.mac(nil, body, principal), sum) {
		return s, errStateForged
	}
	if body[0] != stateVersion {
		return s, errStateMalformed
	}
	s.kind = body[1]
	s.instance = binary.BigEndian.Uint64(body[2:])
	s.handle = binary.BigEndian.Uint64(body[10:])
	s.callID = int64(binary.BigEndian.Uint64(body[18:]))
	s.round = binary.BigEndian.Uint32(body[26:])
	s.expiry = int64(binary.BigEndian.Uint64(body[30:]))
	s.inner = body[stateFixed:]
	switch {
	case s.kind < statePending || s.kind > stateUpstream:
		return s, errStateMalformed
	case now.UnixMilli() >= s.expiry:
		return s, errStateExpired
	}
	return s, nil
}

// strictBase64 decodes a state: unpadded base64url whose last character's
// unused bits must be zero, so that no second spelling of an issued state
// reads as it.
var strictBase64 = base64.RawURLEncoding.Strict()

// base64URLByte reports whether c is in the unpadded base64url alphabet.
func base64URLByte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}
