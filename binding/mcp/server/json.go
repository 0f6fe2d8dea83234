package server

import (
	"bytes"
	"encoding/base64"

	"github.com/sluicehq/sluice/binding/http/h1"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// The server reads a request body held whole in a buffer slot with its
// worker's jsonrpc.Tracker, which validates it (RFC 8259, its strings
// UTF-8) and finds its members in one pass; jsonrpc's helpers then walk
// the values without allocating.

// maxJSONDepth bounds the nesting of a body the server accepts.
const maxJSONDepth = 128

// jsonOptions are the rules a body held whole, or an application's reply,
// must keep.
var jsonOptions = jsonrpc.Options{MaxDepth: maxJSONDepth, StrictUTF8: true}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isString(v []byte) bool { return len(v) > 0 && v[0] == '"' }
func isObject(v []byte) bool { return len(v) > 0 && v[0] == '{' }

// isInteger reports whether the valid JSON number v is an integer.
func isInteger(v []byte) bool {
	for _, c := range v {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return len(v) > 0
}

// validID reports whether v is a JSON-RPC request id MCP allows: a string
// or an integer (MCP schema: RequestId = string | number; null is not).
func validID(v []byte) bool {
	if isString(v) {
		return true
	}
	return len(v) > 0 && (v[0] == '-' || isDigit(v[0])) && isInteger(v)
}

// decodeHeaderValue decodes a Mcp-Name style header value into dst: plain
// ASCII as is, or the RFC 2047-like =?base64?…?= form 2026-07-28 uses for
// values that are not plain ASCII. ok is false for a malformed encoding or
// one that does not fit dst.
func decodeHeaderValue(dst, v []byte) ([]byte, bool) {
	const pre, post = "=?base64?", "?="
	if len(v) >= len(pre)+len(post) && h1.EqualFold(v[:len(pre)], pre) && string(v[len(v)-2:]) == post {
		enc := v[len(pre) : len(v)-len(post)]
		n := base64.StdEncoding.DecodedLen(len(enc))
		if n > cap(dst)-len(dst) {
			return dst, false
		}
		out := dst[len(dst) : len(dst)+n]
		m, err := base64.StdEncoding.Decode(out, enc)
		if err != nil {
			return dst, false
		}
		return dst[:len(dst)+m], true
	}
	if len(v) > cap(dst)-len(dst) {
		return dst, false
	}
	return append(dst, v...), true
}

// field returns the raw value of obj's member name, and whether it has one.
func field(obj []byte, name string) ([]byte, bool) {
	v := jsonrpc.Lookup(obj, name)
	return v, v != nil
}

// replaceLoneSurrogates rewrites the lone surrogate escapes of params
// (jsonrpc.ReplaceLoneSurrogates) except in its requestState string: that
// goes back byte for byte to the upstream that issued it, which may check
// it, and the server reads it only as text (rounds.go).
func replaceLoneSurrogates(params []byte) {
	if !bytes.Contains(params, []byte(`\u`)) {
		return
	}
	from := 0
	for f, j, ok := jsonrpc.NextField(params, 0); ok; f, j, ok = jsonrpc.NextField(params, j) {
		if isString(f.Value) && jsonrpc.KeyIs(f.Key, "requestState") {
			jsonrpc.ReplaceLoneSurrogates(params[from : j-len(f.Value)])
			from = j
		}
	}
	jsonrpc.ReplaceLoneSurrogates(params[from:])
}

// unquote appends the decoded JSON string b to dst; ok is false when b is
// not a string or does not fit dst's capacity.
func unquote(dst, b []byte) ([]byte, bool) {
	s, err := jsonrpc.UnquoteTo(dst, b)
	return s, err == nil
}

// dupMember returns the first of keys (at most eight) that the object obj
// holds more than once, keys compared as they decode ("n\u0061me" is
// name), or "" when it holds each at most once. Parsers disagree on
// which of two members counts: the gateway refuses what the application
// or an upstream could read differently from it. Of an object held in
// part, only its complete members are seen.
func dupMember(obj []byte, keys ...string) string { return dupMemberValues(obj, nil, keys) }

// dupMemberValues is dupMember that also sets vals[k], when vals is not
// nil, to the value of keys[k], so that one walk over a large object
// finds the members a caller reads next.
func dupMemberValues(obj []byte, vals [][]byte, keys []string) string {
	var seen uint8
	for f, i, ok := jsonrpc.NextField(obj, 0); ok; f, i, ok = jsonrpc.NextField(obj, i) {
		for k, key := range keys {
			if jsonrpc.KeyIs(f.Key, key) {
				if seen&(1<<k) != 0 {
					return key
				}
				seen |= 1 << k
				if vals != nil {
					vals[k] = f.Value
				}
				break
			}
		}
	}
	return ""
}
