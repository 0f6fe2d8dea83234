package proxy

import (
	"iter"
	"math"
	"unicode"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// The fields a tool search indexes, as options.cache.tools.search.fields
// names them.
const (
	fieldName = iota
	fieldDescription
	fieldOutputSchema
	fieldCount
)

var searchFieldNames = [fieldCount]string{"name", "description", "output-schema"}

// catalogTool is one tool of a cached tools list: its name as served,
// the JSON of its description (nil without one), the whole item, and its
// inputSchema once compiled (options.tools).
type catalogTool struct {
	name        string
	description []byte
	item        []byte
	schema      *jsonschema.Schema
	schemaDone  bool
}

// catalog is a cached tools list read for the search tools and argument
// checks: its tools in list order and an index of their names. It views the entry's bytes,
// which the cache never writes again.
type catalog struct {
	tools  []catalogTool
	byName map[string]int32
	index  *keywordIndex // built on the first search
	// building is set while a goroutine builds the index (a large
	// list), and waiting holds the searches that wait for it.
	building bool
	waiting  []indexWaiter
}

// readCatalog reads the tools of a cached tools entry (already checked by
// render); an item without a string name is left out, as the merge
// leaves it out of a list.
func readCatalog(entry []byte) *catalog {
	c := &catalog{byName: map[string]int32{}}
	as, ae, ok := member(entry, "tools")
	if !ok || entry[as] != '[' {
		return c
	}
	for item, name := range namedItems(entry[as:ae]) {
		if _, dup := c.byName[string(name)]; dup {
			continue
		}
		t := catalogTool{name: string(name), item: item}
		if ds, de, ok := member(item, "description"); ok && item[ds] == '"' {
			t.description = item[ds:de]
		}
		c.byName[t.name] = int32(len(c.tools))
		c.tools = append(c.tools, t)
	}
	return c
}

// namedItems yields the items of a JSON array that are objects with a
// string name, and the name unquoted; the others are skipped, as a list
// merge skips them, and so are those that name a member twice.
func namedItems(arr []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func(item, name []byte) bool) {
		for item, i, ok := jsonrpc.NextElement(arr, 0); ok; item, i, ok = jsonrpc.NextElement(arr, i) {
			ns, ne, ok := member(item, "name")
			if !ok || item[ns] != '"' || jsonrpc.NamesTwice(item) {
				continue
			}
			name, err := jsonrpc.Unquote(nil, item[ns:ne])
			if err == nil && !yield(item, name) {
				return
			}
		}
	}
}

// keywordIndex ranks a catalog's tools for a query with BM25 over the
// configured fields, each field's term counts multiplied by its weight
// and summed into one count per tool (Zilla's keyword index).
type keywordIndex struct {
	postings map[string][]posting
	length   []float32 // each tool's weighted token count
	avg      float64
	// scratch for one query at a time: the index is one worker's
	scores  []float64
	touched []int32
}

type posting struct {
	tool int32
	tf   float32
}

// BM25's parameters, as Zilla's keyword index has them.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// newKeywordIndex indexes the fields of c's tools that weights gives a
// weight above zero.
func newKeywordIndex(c *catalog, weights *[fieldCount]float64) *keywordIndex {
	x := &keywordIndex{
		postings: map[string][]posting{},
		length:   make([]float32, len(c.tools)),
		scores:   make([]float64, len(c.tools)),
	}
	tf := map[string]float64{}
	var tokens []string
	total := 0.0
	for i := range c.tools {
		t := &c.tools[i]
		clear(tf)
		length := 0.0
		for f := range fieldCount {
			w := weights[f]
			if w <= 0 {
				continue
			}
			tokens = appendTokens(tokens[:0], fieldText(t, f))
			length += float64(len(tokens)) * w
			for _, tok := range tokens {
				tf[tok] += w
			}
		}
		for tok, n := range tf {
			x.postings[tok] = append(x.postings[tok], posting{tool: int32(i), tf: float32(n)})
		}
		x.length[i] = float32(length)
		total += length
	}
	if len(c.tools) > 0 {
		x.avg = total / float64(len(c.tools))
	}
	return x
}

// fieldText returns the text of field f of t: its name, its description
// unquoted, or the JSON of its outputSchema as it is. It may be a view of
// t's item, which the caller must not write.
func fieldText(t *catalogTool, f int) []byte {
	switch f {
	case fieldName:
		return []byte(t.name)
	case fieldDescription:
		if t.description == nil {
			return nil
		}
		out, err := jsonrpc.Unquote(nil, t.description)
		if err != nil {
			return nil
		}
		return out
	default:
		if s, e, ok := member(t.item, "outputSchema"); ok {
			return t.item[s:e]
		}
		return nil
	}
}

// match is a ranked tool.
type match struct {
	tool  int32
	score float64
}

// query ranks the tools matching any of text's terms, best first (ties
// in list order), keeping the first limit that admit admits.
func (x *keywordIndex) query(dst []match, text []byte, limit int, admit func(tool int32) bool) []match {
	terms := appendTokens(nil, text)
	n := float64(len(x.length))
	for i, term := range terms {
		if indexOf(terms[:i], term) >= 0 {
			continue // a term counts once however often the query gives it
		}
		ps := x.postings[term]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			norm := 1 - bm25B
			if x.avg > 0 {
				norm += bm25B * float64(x.length[p.tool]) / x.avg
			}
			tf := float64(p.tf)
			if x.scores[p.tool] == 0 {
				x.touched = append(x.touched, p.tool)
			}
			x.scores[p.tool] += idf * tf * (bm25K1 + 1) / (tf + bm25K1*norm)
		}
	}
	dst = dst[:0]
	for _, t := range x.touched {
		s := x.scores[t]
		x.scores[t] = 0
		if s <= 0 || !admit(t) {
			continue
		}
		dst = insertRanked(dst, match{tool: t, score: s}, limit)
	}
	x.touched = x.touched[:0]
	return dst
}

// insertRanked inserts m into ranked (best first, ties by list order),
// keeping at most limit.
func insertRanked(ranked []match, m match, limit int) []match {
	at := len(ranked)
	for at > 0 && better(m, ranked[at-1]) {
		at--
	}
	if at >= limit {
		return ranked
	}
	if len(ranked) < limit {
		ranked = append(ranked, match{})
	}
	copy(ranked[at+1:], ranked[at:len(ranked)-1])
	ranked[at] = m
	return ranked
}

func better(a, b match) bool {
	return a.score > b.score || a.score == b.score && a.tool < b.tool
}

func indexOf(s []string, v string) int {
	for i := range s {
		if s[i] == v {
			return i
		}
	}
	return -1
}

// stopwords are left out of the index and of queries: common English
// words that would match almost every description (Zilla's list).
var stopwords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range []string{
		"a", "an", "the", "and", "or", "but", "if", "then", "else", "for", "to", "of", "in", "on",
		"at", "by", "with", "from", "as", "is", "are", "was", "were", "be", "been", "being",
		"this", "that", "these", "those", "it", "its", "into", "than", "so", "such", "not", "no",
		"do", "does", "did", "can", "will", "would", "should", "could", "may", "might", "must",
		"about", "up", "down", "out", "off", "over", "under", "again", "further", "once", "here",
		"there", "when", "where", "why", "how", "all", "each", "other", "some", "own", "same",
	} {
		m[w] = struct{}{}
	}
	return m
}()

// maxToken bounds a token; the rest of a longer run of letters is cut
// off, so that one long word costs no more than this.
const maxToken = 64

// appendTokens appends the terms of text: runs of letters and digits,
// lower-cased, split where camelCase turns a word (listRepos,
// parseXMLDocument at XML|Document, getHTTP2Status at 2|Status),
// stopwords left out. Text that is not
// UTF-8 reads as U+FFFD, which splits words.
func appendTokens(dst []string, text []byte) []string {
	var tok []byte
	var prev, cur rune
	emit := func() {
		if len(tok) == 0 {
			return
		}
		if _, stop := stopwords[string(tok)]; !stop {
			dst = append(dst, string(tok))
		}
		tok = tok[:0]
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRune(text[i:])
		i += size
		prev, cur = cur, r
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			emit()
			continue
		}
		if len(tok) > 0 && unicode.IsUpper(r) {
			next, _ := utf8.DecodeRune(text[i:])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && i < len(text) && unicode.IsLower(next) {
				emit()
			}
		}
		if len(tok) < maxToken {
			tok = utf8.AppendRune(tok, unicode.ToLower(r))
		}
	}
	emit()
	return dst
}
