package proxy

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/internal/enginetest"
)

// FuzzCacheRender renders a cached tools entry as the store may hold it
// (written by another instance, or damaged) into pages of a fuzzed size,
// with encoding/json as the oracle. An entry is used only when it is a
// UTF-8 object that names its list once, an array. One that fits a page
// is served as it is; otherwise its pages hold nothing but the list, and
// each but the last a string nextCursor, a page of two items or more
// stays within the page size but for its cursor, and the items of the
// pages are those of the entry, in order, byte for byte.
func FuzzCacheRender(f *testing.F) {
	for _, s := range []string{
		`{"tools":[{"name":"a"},{"name":"b","x":[1,2,3]},{"name":"c"}]}`,
		`{"tools":[]}`,
		` { "tools" : [ 1 , "two" , {"three":3} ] } `,
		`{"tools":{}}`,
		`{"tools":[1],"tools":[2]}`,
		`{"tools":[1],"t\u006fols":[2]}`,
		`{"tools":[{"name":"` + strings.Repeat("x", 300) + `"},{"name":"y"}]}`,
		`{"tools":[1],"nextCursor":"c"}`,
		`[]`,
		`{"tools":[1,2`,
		"{\"tools\":[\"\xff\"]}",
	} {
		f.Add([]byte(s), uint16(0))
		f.Add([]byte(s), uint16(20))
	}
	k := &cacheKind{lk: &listKinds[0], key: "tools"}
	f.Fuzz(func(t *testing.T, entry []byte, size uint16) {
		c := &cache{cfg: &cacheConfig{page: 16 + int(size)%512}}
		pages, ok := c.render(k, entry, 7)
		if !ok {
			return
		}
		var m map[string]json.RawMessage
		require.True(t, utf8.Valid(entry), "%q", entry)
		require.NoError(t, json.Unmarshal(entry, &m), "%q", entry)
		require.NotContains(t, enginetest.NamedTwice(entry), "tools", "%q", entry)
		var items []json.RawMessage
		require.NoError(t, json.Unmarshal(m["tools"], &items), "the list is an array: %q", entry)
		if len(entry) <= c.cfg.page {
			require.Equal(t, [][]byte{entry}, pages)
			return
		}
		var got []json.RawMessage
		for i, page := range pages {
			var p map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(page, &p), "%q", page)
			require.Empty(t, enginetest.NamedTwice(page), "%q", page)
			var pageItems []json.RawMessage
			require.NoError(t, json.Unmarshal(p["tools"], &pageItems), "%q", page)
			if i+1 < len(pages) {
				var cursor string
				require.NoError(t, json.Unmarshal(p["nextCursor"], &cursor), "%q", page)
				require.Len(t, p, 2, "%q", page)
			} else {
				require.Len(t, p, 1, "%q", page)
			}
			if len(pageItems) > 1 {
				trailer := len(page) - bytes.LastIndexByte(page, ']')
				require.LessOrEqual(t, len(page)-trailer, c.cfg.page, "%q", page)
			}
			got = append(got, pageItems...)
		}
		require.Equal(t, len(items), len(got))
		for i := range items {
			require.Equal(t, compact(t, items[i]), compact(t, got[i]))
		}
		require.True(t, slices.EqualFunc(items, got, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }),
			"items byte for byte")
	})
}

func compact(t *testing.T, v []byte) string {
	var b bytes.Buffer
	require.NoError(t, json.Compact(&b, v))
	return b.String()
}
