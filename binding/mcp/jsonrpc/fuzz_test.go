package jsonrpc_test

// Fuzz targets, with encoding/json as the oracle: FuzzTracker for the
// streaming Tracker, FuzzJSON for the readers of JSON held whole. Their
// seeds are the test tables (added here) and the files under
// testdata/fuzz/<FuzzName>/: MCP messages of every kind, and inputs the
// fuzzer found interesting. Run one with
//
//	go test -run='^$' -fuzz=FuzzJSON -fuzztime=60s ./binding/mcp/jsonrpc/

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// cuts splits n bytes into chunks of random sizes, bounded by one of a
// few scales picked by seed.
func cuts(n int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	scale := [...]int{1, 3, 16, 1024}[seed%4]
	var c []int
	for k := 1 + rng.IntN(scale); k < n; k += 1 + rng.IntN(scale) {
		c = append(c, k)
	}
	return c
}

// FuzzTracker checks, for any input and any split of it into chunks, that
// the Tracker's verdict, end offset, error offset and member ranges are
// encoding/json's (see oracle), that the split changes nothing, and that
// the options behave as documented.
func FuzzTracker(f *testing.F) {
	for _, tt := range rangeTests {
		f.Add([]byte(tt.in), uint64(len(tt.in)))
	}
	for i, m := range splitMessages {
		f.Add([]byte(m), uint64(i))
	}
	tr := jsonrpc.NewTracker(jsonrpc.Options{})
	strict := jsonrpc.NewTracker(jsonrpc.Options{StrictUTF8: true})
	dups := jsonrpc.NewTracker(jsonrpc.Options{RejectDuplicates: true})
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		c := cuts(len(data), seed)
		whole := feed(t, tr, data, nil)
		checkOracle(t, data, whole, false)
		require.Equal(t, whole, feed(t, tr, data, c), "split at %v", c)
		restore := jsonrpc.SetLaneAsm(false)
		require.Equal(t, whole, feed(t, tr, data, c), "portable lane, split at %v", c)
		restore()

		s := feed(t, strict, data, c)
		checkOracle(t, data, s, true)
		require.Equal(t, s, feed(t, strict, data, nil))

		d := feed(t, dups, data, c)
		if whole.Dups == 0 {
			require.Equal(t, whole, d)
		} else if whole.Done {
			require.False(t, d.Done)
			require.Contains(t, d.Err, "duplicate member")
		}
	})
}

// FuzzJSON holds the whole-buffer readers to encoding/json, for any
// input: Valid's verdict under each option, StringEnd at the input's
// quotes, the members NextField and Lookup find in a top-level object and
// the elements NextElement finds in a top-level array (with their decoded
// keys, raw values and end offsets, also of the input cut in half),
// Unquote, UnquoteTo, Version and ParseID on a string or id, and what
// AppendString writes. Where the package differs from encoding/json by
// design, the check says so: StrictUTF8 and MaxDepth reject what
// encoding/json accepts, and Lookup takes a name's first member where
// encoding/json's Unmarshal keeps the last. Unquote replaces invalid UTF-8
// and lone surrogates with U+FFFD exactly as encoding/json does. The
// EventReader has no oracle here: it must read the input the same whole
// and split.
func FuzzJSON(f *testing.F) {
	for _, tt := range rangeTests {
		f.Add([]byte(tt.in))
	}
	for _, m := range splitMessages {
		f.Add([]byte(m))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := json.Valid(data)
		checkValid(t, data, valid)
		checkStringEnds(t, data)
		checkEntries(t, data, valid)
		checkString(t, data, valid)
		checkID(t, data, valid)
		checkAppendString(t, data)
		checkEvents(t, data)
		checkSurrogates(t, data, valid)
	})
}

// checkSurrogates: ReplaceLoneSurrogates leaves valid JSON of the same
// length that encoding/json reads as it read data, and a second pass
// finds nothing to rewrite. ReplaceLoneSurrogatesPart over data in two
// parts, cut anywhere, rewrites it as a whole, holding back at most
// eleven bytes of the first.
func checkSurrogates(t *testing.T, data []byte, valid bool) {
	out := append([]byte(nil), data...)
	n := jsonrpc.ReplaceLoneSurrogates(out)
	require.Len(t, out, len(data))
	if n == 0 {
		require.Equal(t, string(data), string(out))
	}
	for _, cut := range []int{len(data) / 2, len(data) / 3, len(data) - 1} {
		if cut < 0 {
			continue
		}
		parts := append([]byte(nil), data...)
		done, n1 := jsonrpc.ReplaceLoneSurrogatesPart(parts[:cut], false)
		require.LessOrEqual(t, cut-done, 11, "%q cut at %d", data, cut)
		_, n2 := jsonrpc.ReplaceLoneSurrogatesPart(parts[done:], true)
		require.Equal(t, string(out), string(parts), "%q cut at %d", data, cut)
		require.Equal(t, n, n1+n2, "%q cut at %d", data, cut)
	}
	if !valid {
		return
	}
	require.True(t, json.Valid(out), "%q", out)
	decode := func(b []byte) any {
		var v any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&v))
		return v
	}
	want, got := decode(data), decode(out)
	require.Equal(t, want, got, "%q rewritten %q", data, out)
	require.Zero(t, jsonrpc.ReplaceLoneSurrogates(out), "%q", out)
}

// checkValid: Valid is json.Valid, but for its options. StrictUTF8 also
// rejects invalid UTF-8 (anywhere: outside strings it is a syntax error
// anyway), and MaxDepth deeper nesting.
func checkValid(t *testing.T, data []byte, valid bool) {
	if got := jsonrpc.Valid(data, jsonrpc.Options{}); got != valid {
		t.Fatalf("Valid(%q) = %v, json.Valid %v", data, got, valid)
	}
	strict := valid && utf8.Valid(data)
	if got := jsonrpc.Valid(data, jsonrpc.Options{StrictUTF8: true}); got != strict {
		t.Fatalf("Valid(%q, StrictUTF8) = %v, want %v", data, got, strict)
	}
	if valid {
		shallow := strict && depth(t, data) <= 8
		if got := jsonrpc.Valid(data, jsonrpc.Options{StrictUTF8: true, MaxDepth: 8}); got != shallow {
			t.Fatalf("Valid(%q, StrictUTF8, MaxDepth 8) = %v, want %v", data, got, shallow)
		}
	}
}

// checkStringEnds: StringEnd at each of the first quotes of data ends
// the shortest prefix that json.Valid takes for a string; where there is
// none (the string breaks a rule), it is past the first unescaped quote,
// or -1. The oracle tries every quote after, so long inputs are left out.
func checkStringEnds(t *testing.T, data []byte) {
	if len(data) > 1024 {
		return
	}
	quotes := 0
	for i := 0; i < len(data) && quotes < 8; i++ {
		if data[i] != '"' {
			continue
		}
		quotes++
		checkStringEnd(t, data, i)
	}
}

// checkEntries: the members or elements of a valid top-level object or
// array are encoding/json's, whole and in part; on any input, the walks
// end without a panic.
func checkEntries(t *testing.T, data []byte, valid bool) {
	if !valid {
		for f, i, ok := jsonrpc.NextField(data, 0); ok; f, i, ok = jsonrpc.NextField(data, i) {
			_ = jsonrpc.KeyIs(f.Key, "id")
		}
		for _, i, ok := jsonrpc.NextElement(data, 0); ok; _, i, ok = jsonrpc.NextElement(data, i) {
		}
		_ = jsonrpc.Lookup(data, "method")
		return
	}
	kind, want := entries(t, data)
	got := walk(t, data, kind)
	require.Equal(t, want, got, "entries of %q", data)
	cut := walk(t, data[:len(data)/2], kind)
	require.LessOrEqual(t, len(cut), len(want))
	require.Equal(t, append([]entry(nil), want[:len(cut)]...), cut, "entries of %q cut at %d", data, len(data)/2)
	if kind != '{' {
		return
	}
	first := map[string]string{}
	for _, e := range want {
		if _, ok := first[e.Key]; !ok {
			first[e.Key] = e.Value // the first, where encoding/json's Unmarshal keeps the last
		}
		if e.Value[0] == '"' {
			checkString(t, []byte(e.Value), true)
		}
	}
	for key, v := range first {
		require.Equal(t, v, string(jsonrpc.Lookup(data, key)), "Lookup(%q, %q)", data, key)
	}
}

// walk lists the members (kind '{') or elements (kind '[') of data as
// NextField or NextElement find them, keys decoded.
func walk(t *testing.T, data []byte, kind byte) []entry {
	var out []entry
	switch kind {
	case '{':
		for f, i, ok := jsonrpc.NextField(data, 0); ok; f, i, ok = jsonrpc.NextField(data, i) {
			key, err := jsonrpc.Unquote(nil, f.Key)
			require.NoError(t, err, "key %q", f.Key)
			require.True(t, jsonrpc.KeyIs(f.Key, string(key)), "KeyIs(%q, %q)", f.Key, key)
			out = append(out, entry{Key: string(key), Value: string(f.Value), End: int64(i)})
		}
	case '[':
		for v, i, ok := jsonrpc.NextElement(data, 0); ok; v, i, ok = jsonrpc.NextElement(data, i) {
			out = append(out, entry{Value: string(v), End: int64(i)})
		}
	default:
		_, _, ok := jsonrpc.NextField(data, 0)
		require.False(t, ok, "a member in %q", data)
		_, _, ok = jsonrpc.NextElement(data, 0)
		require.False(t, ok, "an element in %q", data)
	}
	return out
}

// checkString: Unquote decodes a string as encoding/json does and
// rejects what it rejects; UnquoteTo agrees in exactly the room the text
// needs, and reports ErrTooLong in less; Version is "2.0" after decoding.
func checkString(t *testing.T, data []byte, valid bool) {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return
	}
	got, err := jsonrpc.Unquote(nil, data)
	require.Equal(t, valid, err == nil, "Unquote(%q): %v", data, err)
	if !valid {
		return
	}
	var want string
	require.NoError(t, json.Unmarshal(data, &want))
	require.Equal(t, want, string(got), "Unquote(%q)", data)
	require.Equal(t, want == "2.0", jsonrpc.Version(data))
	fit, err := jsonrpc.UnquoteTo(make([]byte, 0, len(want)), data)
	require.NoError(t, err)
	require.Equal(t, want, string(fit))
	if len(want) > 0 {
		_, err = jsonrpc.UnquoteTo(make([]byte, 0, len(want)-1), data)
		require.ErrorIs(t, err, jsonrpc.ErrTooLong)
	}
}

// checkID: ParseID's kind and canonical bytes are those of encoding/json's
// value, and it accepts nothing encoding/json rejects.
func checkID(t *testing.T, data []byte, valid bool) {
	trimmed := strings.TrimSpace(string(data))
	kind, canon, err := jsonrpc.ParseID(nil, []byte(trimmed))
	if !valid || trimmed != string(data) {
		if err == nil && kind != jsonrpc.IDNone {
			require.True(t, json.Valid([]byte(trimmed)), "ParseID accepted %q", trimmed)
		}
		return
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&v))
	switch v := v.(type) {
	case string:
		require.NoError(t, err)
		require.Equal(t, jsonrpc.IDString, kind)
		require.Equal(t, v, string(canon))
	case json.Number:
		require.NoError(t, err)
		require.Equal(t, jsonrpc.IDNumber, kind)
		require.Equal(t, data, canon)
	case nil:
		require.NoError(t, err)
		require.Equal(t, jsonrpc.IDNull, kind)
	default:
		require.ErrorIs(t, err, jsonrpc.ErrInvalidID)
	}
}

// checkAppendString: AppendString writes valid JSON that encoding/json
// reads as the text it reads from its own encoding of data (each byte
// that is not UTF-8 as U+FFFD), from bytes and from a string alike.
func checkAppendString(t *testing.T, data []byte) {
	out := jsonrpc.AppendString(nil, data)
	require.Equal(t, out, jsonrpc.AppendString(nil, string(data)))
	var got, want string
	require.NoError(t, json.Unmarshal(out, &got), "%q", out)
	enc, err := json.Marshal(string(data))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(enc, &want))
	require.Equal(t, want, got)
}

// checkEvents: an EventReader reads data split in two as it reads it
// whole.
func checkEvents(t *testing.T, data []byte) {
	read := func(chunks ...[]byte) (events []string, last string, retry int64) {
		var r jsonrpc.EventReader
		for _, c := range chunks {
			for len(c) > 0 {
				n, ev, err := r.Next(c)
				require.NoError(t, err)
				require.True(t, n > 0 || ev != nil, "no progress")
				c = c[n:]
				if ev != nil {
					events = append(events, string(ev))
				}
			}
		}
		return events, string(r.LastID()), r.Retry()
	}
	e1, l1, r1 := read(data)
	e2, l2, r2 := read(data[:len(data)/2], data[len(data)/2:])
	require.Equal(t, e1, e2)
	require.Equal(t, l1, l2)
	require.Equal(t, r1, r2)
}
