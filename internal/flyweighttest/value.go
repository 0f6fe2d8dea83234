package flyweighttest

import "fmt"

// Distinctive values for an extension's compositeId and typeId: every
// byte differs, so a wrong width, offset or byte order shows.
const (
	CompositeID int64 = 0x0102030405060708
	TypeID      int32 = 0x0a0b0c0d
)

// NStr is a decoded string field: its text S, or null.
type NStr struct {
	Null bool
	S    string
}

// Text is the string field s.
func Text(s string) NStr { return NStr{S: s} }

// Null is the null string field.
var Null = NStr{Null: true}

// StrOf reads a string field through its three getters (HasX, X, XString)
// and folds them into one value; getters that disagree give a value that
// matches nothing.
func StrOf(has bool, b []byte, s string) NStr {
	if has != (b != nil) || s != string(b) || cap(b) != len(b) {
		return NStr{S: fmt.Sprintf("inconsistent getters: Has=%v bytes=%q (cap %d) string=%q", has, b, cap(b), s)}
	}
	if !has {
		return Null
	}
	return Text(s)
}
