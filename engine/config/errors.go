package config

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// ErrInvalid is matched (with errors.Is) by every [Error] and [ErrorList]
// that Load, LoadFile and [Raw.Decode] return for a bad configuration.
var ErrInvalid = errors.New("config: invalid configuration")

// Error is one problem in a configuration file, at a line.
type Error struct {
	Pos
	// Path is the dotted path of the offending value, such as
	// bindings.app0.routes[1].exit; empty for the top level.
	Path string
	// Msg says what is wrong, in plain words.
	Msg string

	// ptr is the JSON pointer of the value the error is about; empty when
	// it is about a key of a mapping (missing, unknown, misnamed).
	ptr string
}

// Error formats the problem as file:line: path: message, on one line.
func (e *Error) Error() string {
	var sb strings.Builder
	sb.WriteString(e.File)
	sb.WriteByte(':')
	sb.WriteString(strconv.Itoa(e.Line))
	sb.WriteString(": ")
	if e.Path != "" {
		sb.WriteString(oneLine(elide(e.Path)))
		sb.WriteString(": ")
	}
	sb.WriteString(oneLine(e.Msg))
	return sb.String()
}

// Is reports whether target is [ErrInvalid].
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// ErrorList holds every problem found in one file, sorted by line.
type ErrorList struct {
	errs []*Error
}

// Errors returns the problems, sorted by line, then path.
func (l *ErrorList) Errors() []*Error { return slices.Clone(l.errs) }

// Error returns one problem per line.
func (l *ErrorList) Error() string {
	lines := make([]string, len(l.errs))
	for i, e := range l.errs {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Is reports whether target is [ErrInvalid].
func (l *ErrorList) Is(target error) bool { return target == ErrInvalid }

// Unwrap returns the problems, so errors.As finds an [*Error].
func (l *ErrorList) Unwrap() []error {
	out := make([]error, len(l.errs))
	for i, e := range l.errs {
		out[i] = e
	}
	return out
}

// newErrorList sorts and de-duplicates errs; it returns nil when errs is
// empty, so callers can return its result as an error directly only after
// checking the length.
func newErrorList(errs []*Error) *ErrorList {
	if len(errs) == 0 {
		return nil
	}
	sorted := slices.Clone(errs)
	slices.SortStableFunc(sorted, func(a, b *Error) int {
		return cmp.Or(
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.Msg, b.Msg),
			cmp.Compare(a.Col, b.Col),
		)
	})
	sorted = slices.CompactFunc(sorted, func(a, b *Error) bool {
		return a.File == b.File && a.Line == b.Line && a.Path == b.Path && a.Msg == b.Msg
	})
	return &ErrorList{errs: sorted}
}

// oneLine keeps a message on one line whatever text the file put into it.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}

// maxPathLen bounds how much of a path an error line shows; only hostile
// input nests deep enough to reach it.
const maxPathLen = 240

// elide shortens an overlong path to its head and tail.
func elide(path string) string {
	r := []rune(path)
	if len(r) <= maxPathLen {
		return path
	}
	return string(r[:maxPathLen/2]) + "…" + string(r[len(r)-maxPathLen/2:])
}
