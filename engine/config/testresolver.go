package config

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// TestResolver resolves ${{ test.KEY }} as the resolver of Zilla's test
// engine does, for running Zilla's spec configs: PASSWORD, PORT and
// EXPRESSION have fixed values, and randomBase64.N is N pseudo-random
// bytes in base64, the same bytes Zilla's java.util.Random seeded with N
// gives. Use it with WithResolver("test", TestResolver); it is for specs,
// not for production configs.
func TestResolver(key string) (string, bool) {
	switch key {
	case "PASSWORD":
		return "ACTUALPASSWORD", true
	case "PORT":
		return "1234", true
	case "EXPRESSION":
		return "${{test.EXPRESSION}}", true
	}
	if n, ok := strings.CutPrefix(key, "randomBase64."); ok {
		length, err := strconv.Atoi(n)
		if err != nil || length < 0 || length > 64<<20 {
			return "", false
		}
		return base64.StdEncoding.EncodeToString(javaRandomBytes(int64(length), length)), true
	}
	return "", false
}

// javaRandomBytes returns n bytes of java.util.Random(seed).nextBytes: a
// 48-bit linear congruential generator whose 32-bit outputs fill the
// bytes low byte first.
func javaRandomBytes(seed int64, n int) []byte {
	const (
		mult = 0x5DEECE66D
		mask = 1<<48 - 1
	)
	s := (seed ^ mult) & mask
	out := make([]byte, n)
	for i := 0; i < n; {
		s = (s*mult + 0xB) & mask
		rnd := uint32(s >> 16)
		for k := 0; k < 4 && i < n; k++ {
			out[i] = byte(rnd)
			rnd >>= 8
			i++
		}
	}
	return out
}
