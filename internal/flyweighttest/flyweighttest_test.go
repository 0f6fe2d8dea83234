package flyweighttest_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicehq/sluice/internal/flyweighttest"
)

type enc = flyweighttest.Enc

// TestEnc pins the hand encoder that the bindings' tests compare generated
// code against.
func TestEnc(t *testing.T) {
	tests := []struct {
		name string
		got  enc
		want []byte
	}{
		{"U8", enc{}.U8(0xfe), []byte{0xfe}},
		{"U16", enc{}.U16(0x0102), []byte{0x02, 0x01}},
		{"I32", enc{}.I32(-2), []byte{0xfe, 0xff, 0xff, 0xff}},
		{"I64", enc{}.I64(0x0102030405060708), []byte{8, 7, 6, 5, 4, 3, 2, 1}},
		{"Ext", enc{}.Ext(1, -1), []byte{1, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}},
		{"Str16", enc{}.Str16("ab"), []byte{2, 0, 'a', 'b'}},
		{"Str16 empty", enc{}.Str16(""), []byte{0, 0}},
		{"Null16", enc{}.Null16(), []byte{0xff, 0xff}},
		{"NStr8", enc{}.NStr8(flyweighttest.Text("ab")), []byte{2, 'a', 'b'}},
		{"NStr8 longest", enc{}.NStr8(flyweighttest.Text(strings.Repeat("x", 127))), append([]byte{127}, strings.Repeat("x", 127)...)},
		{"NStr8 null", enc{}.NStr8(flyweighttest.Null), []byte{0xff}},
		{"NStr16", enc{}.NStr16(flyweighttest.Text("ab")), []byte{2, 0, 'a', 'b'}},
		{"NStr16 null", enc{}.NStr16(flyweighttest.Null), []byte{0xff, 0xff}},
		{"Array empty", enc{}.Array(), []byte{0, 0, 0, 0, 0, 0, 0, 0}},
		{"Array", enc{}.Array(enc{}.U8(1), enc{}.U16(2)), []byte{3, 0, 0, 0, 2, 0, 0, 0, 1, 2, 0}},
		{"chained", enc{}.Add(9).U8(1).Str16("a"), []byte{9, 1, 1, 0, 'a'}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, []byte(tc.got))
		})
	}
}

// TestEncNeverAliases checks that encodings sharing a prefix stay apart.
func TestEncNeverAliases(t *testing.T) {
	prefix := make(enc, 1, 16)
	a := prefix.U8(1)
	b := prefix.U8(2)
	assert.Equal(t, []byte{0, 1}, []byte(a))
	assert.Equal(t, []byte{0, 2}, []byte(b))
	assert.Equal(t, []byte{0}, []byte(prefix))
}

func TestStrOf(t *testing.T) {
	b := []byte("abc")
	assert.Equal(t, flyweighttest.Text("abc"), flyweighttest.StrOf(true, b, "abc"))
	assert.Equal(t, flyweighttest.Text(""), flyweighttest.StrOf(true, []byte{}, ""))
	assert.Equal(t, flyweighttest.Null, flyweighttest.StrOf(false, nil, ""))

	// Getters that disagree give a value that matches neither null nor any
	// of the texts they returned.
	for _, got := range []flyweighttest.NStr{
		flyweighttest.StrOf(true, nil, ""),           // Has without bytes
		flyweighttest.StrOf(false, []byte{}, ""),     // bytes without Has
		flyweighttest.StrOf(true, b, "abd"),          // X and XString differ
		flyweighttest.StrOf(true, b[:2], "ab"),       // room to append into the next field
		flyweighttest.StrOf(false, nil, "not empty"), // XString of a null field
	} {
		assert.False(t, got.Null, "%#v", got)
		assert.Contains(t, got.S, "inconsistent getters")
	}
}
