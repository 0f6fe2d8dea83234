package jsonrpc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// members lists the tracked members in order.
var members = [...]jsonrpc.Member{
	jsonrpc.MemberJSONRPC, jsonrpc.MemberID, jsonrpc.MemberMethod,
	jsonrpc.MemberParams, jsonrpc.MemberResult, jsonrpc.MemberError,
	jsonrpc.MemberResultType, jsonrpc.MemberRequestState,
}

// outcome is everything a Tracker reports about one message.
type outcome struct {
	Done     bool
	Consumed int64 // bytes consumed in all
	Err      string
	ErrOff   int64
	Kind     jsonrpc.Kind
	Value    jsonrpc.Range
	Ranges   [len(members)]jsonrpc.Range
	Complete jsonrpc.Members
	Dups     jsonrpc.Members
	Keys     jsonrpc.Keys
	Twice    jsonrpc.Keys // KeysTwice
}

// feed runs tr over in, split before each offset in cuts (ascending,
// within (0, len(in))), then calls Finish, checking Feed's contract on
// the way.
func feed(t testing.TB, tr *jsonrpc.Tracker, in []byte, cuts []int) outcome {
	t.Helper()
	tr.Reset()
	var o outcome
	a := 0
	var err error
	for k := 0; k <= len(cuts); k++ {
		b := len(in)
		if k < len(cuts) {
			b = cuts[k]
		}
		// Plain checks here, not testify's: this loop runs once a byte
		// when the fuzzer splits byte by byte.
		var n int
		n, o.Done, err = tr.Feed(in[a:b])
		o.Consumed += int64(n)
		if n < 0 || n > b-a || o.Consumed != tr.Offset() {
			t.Fatalf("Feed consumed %d of %d bytes, offset %d after %d", n, b-a, tr.Offset(), o.Consumed)
		}
		if err != nil || o.Done {
			break
		}
		if n != b-a {
			t.Fatalf("a running Feed consumed %d of %d bytes", n, b-a)
		}
		// What is reported complete lies within what was fed.
		for _, m := range members {
			if r := tr.Member(m); r.Complete() && (r.End > o.Consumed || !tr.Members().Has(m)) {
				t.Fatalf("member %v complete at %v after %d bytes (members %b)", m, r, o.Consumed, tr.Members())
			}
		}
		a = b
	}
	if err == nil && !o.Done {
		err = tr.Finish()
		o.Done = err == nil
	}
	require.Equal(t, o.Done, tr.Done())
	if err != nil {
		var se *jsonrpc.SyntaxError
		require.True(t, errors.As(err, &se), "%T %v", err, err)
		require.Equal(t, err, tr.Err())
		o.Err, o.ErrOff = err.Error(), se.Offset
		// Sticky.
		_, done, err2 := tr.Feed([]byte("{}"))
		require.False(t, done)
		require.Equal(t, err, err2)
		require.Equal(t, err, tr.Finish())
	} else {
		require.NoError(t, tr.Err())
		// Done is sticky and consumes nothing.
		n, done, err2 := tr.Feed([]byte("{}"))
		require.Zero(t, n)
		require.True(t, done)
		require.NoError(t, err2)
	}
	o.Kind, o.Value = tr.Kind(), tr.Value()
	for i, m := range members {
		o.Ranges[i] = tr.Member(m)
	}
	o.Complete, o.Dups = tr.Members(), tr.Duplicates()
	o.Keys, o.Twice = tr.Keys(), tr.KeysTwice()
	if o.Done {
		require.Equal(t, o.Value.End, o.Consumed)
		require.Equal(t, tr.Members().Has(jsonrpc.MemberParams), tr.ParamsDone())
	}
	return o
}

// expected is what encoding/json finds in a message.
type expected struct {
	Valid  bool
	End    int64 // where the top-level value ends, when Valid
	ErrOff int64 // the offending byte's offset, or len(in) for an early end
	Depth  bool  // the error is "exceeded max depth"
	Object bool  // the top-level value is an object
	Ranges [len(members)]jsonrpc.Range
	Dups   jsonrpc.Members
	Keys   jsonrpc.Keys // the noted keys among the object's
	Twice  jsonrpc.Keys // … and those it has more than once
}

// oracle reads one value from in with encoding/json's Decoder, and if it
// is an object, re-scans its members with Token and RawMessage.
func oracle(t testing.TB, in []byte) expected {
	t.Helper()
	var e expected
	dec := json.NewDecoder(bytes.NewReader(in))
	var raw json.RawMessage
	err := dec.Decode(&raw)
	var se *json.SyntaxError
	switch {
	case err == nil:
		e.Valid, e.End = true, dec.InputOffset()
		require.True(t, json.Valid(in[:e.End]), "json.Valid on the value prefix")
	case errors.As(err, &se):
		e.ErrOff = offending(t, in, se)
		e.Depth = strings.HasSuffix(se.Error(), "exceeded max depth")
		return e
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		e.ErrOff = int64(len(in))
		require.False(t, json.Valid(in))
		return e
	default:
		t.Fatalf("decode: %v", err)
	}
	v := in[:e.End]
	start := e.End - int64(len(raw))
	if v[start] != '{' {
		return e
	}
	e.Object = true
	_, es := entries(t, v)
	var seen jsonrpc.Members
	for _, en := range es {
		for i, m := range members {
			if en.Key == m.String() {
				if seen.Has(m) {
					e.Dups |= 1 << m
				}
				seen |= 1 << m
				e.Ranges[i] = jsonrpc.Range{Start: en.End - int64(len(en.Value)), End: en.End}
			}
		}
		for k := range jsonrpc.Key(8) {
			if en.Key == k.String() {
				e.Twice |= e.Keys & (1 << k)
				e.Keys |= 1 << k
			}
		}
	}
	return e
}

// pastRune reports whether encoding/json's syntax errors point past the
// whole offending rune (Go 1.27, on encoding/json/v2) rather than past its
// first byte (before): " é" fails at offset 3 or at 2.
var pastRune = func() bool {
	var se *json.SyntaxError
	errors.As(json.Unmarshal([]byte(" \u00e9"), new(any)), &se)
	return se != nil && se.Offset == 3
}()

// offending maps encoding/json's syntax error to the offset of the
// offending byte, which a Tracker reports. Before Go 1.27 the error's
// offset is just past that byte. On encoding/json/v2 it is past the
// offending rune, or past the escape sequence the message quotes, whose
// offending byte is its second ("\q") or its first non-hex digit ("\u12x4").
func offending(t testing.TB, in []byte, se *json.SyntaxError) int64 {
	t.Helper()
	if !pastRune {
		return se.Offset - 1
	}
	msg := se.Error()
	if q, ok := strings.CutPrefix(msg, "invalid escape sequence "); ok {
		q = strings.TrimSuffix(q, " in string")
		seq, err := strconv.Unquote(q)
		if err != nil {
			t.Fatalf("escape sequence error not quoted: %s", msg)
		}
		start := se.Offset - int64(len(seq))
		if len(seq) < 2 || seq[1] != 'u' {
			return start + 1
		}
		i := 2
		for i < len(seq) && strings.IndexByte("0123456789abcdefABCDEF", seq[i]) >= 0 {
			i++
		}
		return start + int64(i)
	}
	_, size := utf8.DecodeLastRune(in[:se.Offset])
	return se.Offset - int64(size)
}

// entry is a member of a top-level object, or an element of a top-level
// array, as encoding/json reads it: the decoded key (of a member), the
// raw value and the offset where the value ends.
type entry struct {
	Key   string
	Value string
	End   int64
}

// entries reads the valid JSON value v with encoding/json's Decoder and
// returns its first token's delimiter ('{' or '[', else 0) and the
// members or elements of the object or array.
func entries(t testing.TB, v []byte) (byte, []entry) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber() // a number too large for a float64 is valid JSON
	tok, err := dec.Token()
	require.NoError(t, err)
	d, ok := tok.(json.Delim)
	if !ok {
		return 0, nil
	}
	var out []entry
	for dec.More() {
		var e entry
		if d == '{' {
			k, err := dec.Token()
			require.NoError(t, err)
			e.Key = k.(string)
		}
		var raw json.RawMessage
		require.NoError(t, dec.Decode(&raw))
		e.Value, e.End = string(raw), dec.InputOffset()
		out = append(out, e)
	}
	return byte(d), out
}

// depth returns how deep objects and arrays nest in the valid JSON value
// v, by encoding/json's tokens.
func depth(t testing.TB, v []byte) int {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	n, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return deepest
		}
		require.NoError(t, err)
		switch tok {
		case json.Delim('{'), json.Delim('['):
			n++
			deepest = max(deepest, n)
		case json.Delim('}'), json.Delim(']'):
			n--
		}
	}
}

// checkOracle compares a Tracker's outcome with encoding/json's.
func checkOracle(t testing.TB, in []byte, o outcome, strict bool) {
	t.Helper()
	e := oracle(t, in)
	if strict && e.Valid && !utf8.Valid(in[:e.End]) {
		// StrictUTF8 rejects at the first bad sequence.
		require.False(t, o.Done, "strict accepted invalid UTF-8")
		require.Contains(t, o.Err, "invalid UTF-8")
		require.Equal(t, firstInvalidUTF8(in), o.ErrOff)
		return
	}
	if strict && !e.Valid && !o.Done && bytes.Contains([]byte(o.Err), []byte("invalid UTF-8")) {
		// A bad sequence before the JSON error.
		require.LessOrEqual(t, o.ErrOff, e.ErrOff)
		require.Equal(t, firstInvalidUTF8(in), o.ErrOff)
		return
	}
	if strict && !o.Done && o.ErrOff < int64(len(in)) {
		// No bad sequence went unreported before a JSON error.
		require.Equal(t, int64(-1), firstInvalidUTF8(in[:o.ErrOff]), o.Err)
	}
	require.Equal(t, e.Valid, o.Done, "verdict (err %q)", o.Err)
	if !e.Valid {
		require.Equal(t, e.ErrOff, o.ErrOff, "error offset: %s", o.Err)
		require.Equal(t, e.Depth, bytes.Contains([]byte(o.Err), []byte("exceeded max depth")), o.Err)
		return
	}
	require.Equal(t, e.End, o.Value.End, "end offset")
	require.Equal(t, e.Object, o.Kind == jsonrpc.KindObject)
	if e.Object {
		require.Equal(t, e.Ranges, o.Ranges, "member ranges")
		require.Equal(t, e.Dups, o.Dups, "duplicates")
		require.Equal(t, e.Keys, o.Keys, "noted keys")
		require.Equal(t, e.Twice, o.Twice, "noted keys given twice")
	}
}

// firstInvalidUTF8 returns the offset of the first byte that starts no
// valid UTF-8 sequence, or -1.
func firstInvalidUTF8(b []byte) int64 {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return int64(i)
		}
		i += n
	}
	return -1
}
