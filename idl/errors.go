package idl

import (
	"cmp"
	"fmt"
	"slices"
)

// add appends an error at pos.
func (l *ErrorList) add(pos Pos, format string, args ...any) {
	*l = append(*l, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// sort orders the errors by file (in the order of files), line and column,
// and drops exact duplicates.
func (l *ErrorList) sort(files []string) {
	rank := make(map[string]int, len(files))
	for i, name := range files {
		if _, dup := rank[name]; !dup {
			rank[name] = i
		}
	}
	fileRank := func(name string) int {
		if r, ok := rank[name]; ok {
			return r
		}
		return len(files)
	}
	slices.SortStableFunc(*l, func(a, b *Error) int {
		return cmp.Or(
			cmp.Compare(fileRank(a.Pos.File), fileRank(b.Pos.File)),
			cmp.Compare(a.Pos.File, b.Pos.File),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Col, b.Pos.Col),
		)
	})
	*l = slices.CompactFunc(*l, func(a, b *Error) bool { return *a == *b })
}
