package h1_test

import (
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/http/h1"
)

// TestSkipSWAR checks the eight-bytes-at-a-time scans against a byte loop,
// on every byte value at every offset of a block and on random buffers of
// the bytes at the edges of the classes.
func TestSkipSWAR(t *testing.T) {
	okValue := func(c byte) bool { return c == '\t' || c >= 0x20 && c != 0x7f }
	okTarget := func(c byte) bool { return c > 0x20 && c != 0x7f }
	naive := func(b []byte, i int, ok func(byte) bool) int {
		for i < len(b) && ok(b[i]) {
			i++
		}
		return i
	}
	check := func(b []byte) {
		for i := 0; i <= len(b); i++ {
			require.Equal(t, naive(b, i, okValue), h1.SkipValue(b, i), "value %q from %d", b, i)
			require.Equal(t, naive(b, i, okTarget), h1.SkipTarget(b, i), "target %q from %d", b, i)
		}
	}
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 16; pos++ {
			b := []byte("abcdefghijklmnopqrstuvwx")
			b[pos] = byte(c)
			check(b)
		}
	}
	edges := []byte{0x00, 0x01, '\t', '\n', '\r', 0x1f, ' ', '!', 'a', 0x7e, 0x7f, 0x80, 0x81, 0xa0, 0xfe, 0xff}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			if rng.IntN(4) == 0 {
				b[i] = edges[rng.IntN(len(edges))]
			} else {
				b[i] = 'a'
			}
		}
		check(b)
	}
}

// TestValidIPv6 checks the IP-literal grammar against net/netip, which
// net/url uses to validate bracketed hosts.
func TestValidIPv6(t *testing.T) {
	inputs := []string{
		"::", "::1", "1::", "1::2", "2001:db8::1", "2001:db8:0:0:0:0:0:1", "1:2:3:4:5:6:7:8",
		"1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", ":1::", "1:::2",
		"1::2::3", "::ffff:192.0.2.1", "1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:7:1.2.3.4", "::1.2.3.4",
		"::1.2.3", "::1.2.3.256", "::1.02.3.4", "::0.0.0.0", "1.2.3.4", "", ":", "12345::", "abcd::EF01",
		"g::", "::1%eth0", "fe80::1%25eth0", "1::2:", ":1:2", "::1:", "::ffff:1.2.3.4:5",
	}
	for _, s := range inputs {
		addr, err := netip.ParseAddr(s)
		want := err == nil && addr.Zone() == "" && !addr.Is4()
		assert.Equal(t, want, h1.ValidIPv6([]byte(s)), "%q", s)
	}
}

func TestValidAuthority(t *testing.T) {
	tests := []struct {
		in                 string
		needHost, needPort bool
		want               bool
	}{
		{"example.com", false, false, true},
		{"example.com:80", true, true, true},
		{"example.com:", true, false, true},
		{"example.com:", true, true, false},
		{"", false, false, true},
		{"", true, false, false},
		{":80", false, false, true},
		{":80", true, false, false},
		{"a_b-c~d.e!$&'()*+,;=", true, false, true},
		{"[::1]", true, false, true},
		{"[::1]:8080", true, true, true},
		{"[::1]8080", true, false, false},
		{"[::1", true, false, false},
		{"[1.2.3.4]", true, false, false},
		{"a:b:c", true, false, false},
		{"a:8x", true, false, false},
		{"u@h", true, false, false},
		{"h%41", true, false, false},
		{"a b", true, false, false},
		{"a/b", true, false, false},
		{"a]b", true, false, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, h1.ValidAuthority([]byte(tt.in), tt.needHost, tt.needPort), "%q", tt.in)
	}
}
