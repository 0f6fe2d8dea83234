package telemetry

import (
	"fmt"
	"iter"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxLabels is the most labels a [Labels] set holds. Sluice's metrics carry
// namespace and binding, and a few carry one or two more (an elicitation
// action, an MCP method); a fixed bound keeps Labels a comparable value.
const MaxLabels = 6

// Label is one key/value pair of a [Labels] set.
type Label struct {
	Key, Value string
}

// Labels is a small set of key/value pairs sorted by key, such as
// {binding="app0", namespace="test"}. It is a comparable value: use it as a
// map key, compare it with ==, and copy it freely; building and looking it
// up allocates nothing. The zero value is the empty set.
type Labels struct {
	n     uint8
	pairs [MaxLabels]Label
}

// NewLabels returns the set of the key/value pairs kv, given as key, value,
// key, value, …, in any order. Keys must be Prometheus label names
// ([a-zA-Z_][a-zA-Z0-9_]*, not starting with "__", not "le") and distinct;
// values must be valid UTF-8.
func NewLabels(kv ...string) (Labels, error) {
	var l Labels
	if len(kv)%2 != 0 {
		return l, fmt.Errorf("%w: odd number of arguments (%d): want key, value pairs", ErrInvalidLabels, len(kv))
	}
	if len(kv)/2 > MaxLabels {
		return l, fmt.Errorf("%w: %d labels, at most %d", ErrInvalidLabels, len(kv)/2, MaxLabels)
	}
	for i := 0; i < len(kv); i += 2 {
		k, v := kv[i], kv[i+1]
		if err := checkLabelKey(k); err != nil {
			return Labels{}, err
		}
		if !utf8.ValidString(v) {
			return Labels{}, fmt.Errorf("%w: value of %q is not valid UTF-8", ErrInvalidLabels, k)
		}
		// Insertion sort: at most MaxLabels pairs.
		j := int(l.n)
		for j > 0 && l.pairs[j-1].Key > k {
			l.pairs[j] = l.pairs[j-1]
			j--
		}
		if j > 0 && l.pairs[j-1].Key == k {
			return Labels{}, fmt.Errorf("%w: duplicate key %q", ErrInvalidLabels, k)
		}
		l.pairs[j] = Label{Key: k, Value: v}
		l.n++
	}
	return l, nil
}

// MustLabels is like [NewLabels] but panics on an error. Use it with
// constant keys, where a mistake is a programming error.
func MustLabels(kv ...string) Labels {
	l, err := NewLabels(kv...)
	if err != nil {
		panic(err)
	}
	return l
}

// BindingLabels returns {namespace, binding}, the labels of a binding's
// metrics, as Zilla attaches them.
func BindingLabels(namespace, binding string) (Labels, error) {
	return NewLabels("namespace", namespace, "binding", binding)
}

// Len returns the number of labels.
func (l Labels) Len() int { return int(l.n) }

// At returns the i'th label in key order; it panics if i is out of range.
func (l Labels) At(i int) Label { return l.pairs[:l.n][i] }

// Get returns the value of key, and whether the set holds it.
func (l Labels) Get(key string) (string, bool) {
	for _, p := range l.pairs[:l.n] {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// All yields the labels as key, value pairs in key order.
func (l Labels) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for _, p := range l.pairs[:l.n] {
			if !yield(p.Key, p.Value) {
				return
			}
		}
	}
}

// String formats the set as {key="value",…}, in key order.
func (l Labels) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, p := range l.pairs[:l.n] {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p.Key)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(p.Value))
	}
	b.WriteByte('}')
	return b.String()
}

// compare orders label sets by their pairs, key then value, then by length.
func (l Labels) compare(o Labels) int {
	for i := range min(l.n, o.n) {
		a, b := l.pairs[i], o.pairs[i]
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		if c := strings.Compare(a.Value, b.Value); c != 0 {
			return c
		}
	}
	return int(l.n) - int(o.n)
}

// checkLabelKey reports whether k can be a label name in every exporter.
// "le" is the bucket label of Prometheus histograms and "__" prefixes are
// reserved by Prometheus.
func checkLabelKey(k string) error {
	if !isIdent(k) {
		return fmt.Errorf("%w: key %q: want [a-zA-Z_][a-zA-Z0-9_]*", ErrInvalidLabels, k)
	}
	if strings.HasPrefix(k, "__") || k == "le" {
		return fmt.Errorf("%w: key %q is reserved", ErrInvalidLabels, k)
	}
	return nil
}

// isIdent reports whether s matches [a-zA-Z_][a-zA-Z0-9_]*.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
