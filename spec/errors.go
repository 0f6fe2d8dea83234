package spec

import "strings"

// Error is one problem found in a script, at a position.
type Error struct {
	Pos Pos
	Msg string
}

// Error formats as "file:line:col: message".
func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// ErrorList is what [Parse] returns on failure. Parsing stops at the first
// syntax error, as k3po's parser does, so a list from Parse holds one error;
// the type is a list so later checks (the runners' own validation) can
// report several at once.
type ErrorList []*Error

// Error joins the errors, one per line.
func (l ErrorList) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Err returns nil for an empty list, else the list.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}
