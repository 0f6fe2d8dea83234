package spec

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode"

	"github.com/sluicehq/sluice/idl"
)

// coreFuncs is the core namespace: the byte and string helpers k3po's
// function libraries and Zilla's specs use in scripts (randomBytes and its
// UTF-8 variants, randomAscii, letter-case helpers, copyOfRange and
// base64), and Zilla's CoreFunctions that scripts use (randomBase64,
// capabilities). The same helpers are reachable under every IDL namespace that
// does not define the name itself (http:randomBytes(8)), as Zilla's
// per-binding function classes carry them.
var coreFuncs = map[string]funcImpl{
	"randomBytes":              coreRandomBytes,
	"randomBytesUTF8":          coreRandomBytesUTF8,
	"randomBytesInvalidUTF8":   coreRandomBytesInvalidUTF8,
	"randomBytesUnalignedUTF8": coreRandomBytesUnalignedUTF8,
	"randomAscii":              coreRandomASCII,
	"randomizeLetterCase":      coreRandomizeLetterCase,
	"randomCaseNot":            coreRandomCaseNot,
	"copyOfRange":              coreCopyOfRange,
	"base64Encode":             coreBase64Encode,
	"base64Decode":             coreBase64Decode,
	"string":                   coreString,
	"randomBase64":             coreRandomBase64,
	"capabilities":             coreCapabilities,
}

func intArg(x *Call, args []any, i int, what string) (int, error) {
	n, ok := args[i].(int64)
	if !ok || n < 0 || n > 1<<26 {
		return 0, evalErrorf(x.Args[i].Position(), nil, "%s:%s: %s must be a non-negative integer, got %s",
			x.Namespace, x.Name, what, describeValue(args[i]))
	}
	return int(n), nil
}

func arity(x *Call, args []any, n int) error {
	if len(args) != n {
		return evalErrorf(x.Pos, nil, "%s:%s takes %d argument(s), got %d", x.Namespace, x.Name, n, len(args))
	}
	return nil
}

func bytesArg(x *Call, args []any, i int) ([]byte, error) {
	switch v := args[i].(type) {
	case []byte:
		return v, nil
	case string:
		return []byte(v), nil
	}
	return nil, evalErrorf(x.Args[i].Position(), nil, "%s:%s: want bytes, got %s", x.Namespace, x.Name, describeValue(args[i]))
}

func stringArg(x *Call, args []any, i int) (string, error) {
	s, ok := args[i].(string)
	if !ok {
		return "", evalErrorf(x.Args[i].Position(), nil, "%s:%s: want a string, got %s", x.Namespace, x.Name, describeValue(args[i]))
	}
	return s, nil
}

func coreRandomBytes(_ *Env, x *Call, args []any) (any, error) {
	if err := arity(x, args, 1); err != nil {
		return nil, err
	}
	n, err := intArg(x, args, 0, "length")
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rand.IntN(256))
	}
	return b, nil
}

// randomUTF8 fills b[start:end] with random valid UTF-8 characters of 1 to
// 4 bytes, avoiding surrogates and code points past U+10FFFF.
func randomUTF8(b []byte, start, end int) {
	for off := start; off < end; {
		off = randomChar(b, off, min(rand.IntN(4)+1, end-off))
	}
}

func randomChar(b []byte, off, width int) int {
	var r rune
	switch width {
	case 1:
		r = rune(rand.IntN(0x80))
	case 2:
		r = rune(0x80 + rand.IntN(0x800-0x80))
	case 3:
		for r = rune(0x800 + rand.IntN(0x10000-0x800)); r >= 0xd800 && r <= 0xdfff; {
			r = rune(0x800 + rand.IntN(0x10000-0x800))
		}
	default:
		r = rune(0x10000 + rand.IntN(0x110000-0x10000))
	}
	var buf [4]byte
	n := encodeRune(buf[:], r)
	copy(b[off:], buf[:n])
	return off + n
}

func encodeRune(p []byte, r rune) int {
	s := string(r)
	return copy(p, s)
}

func coreRandomBytesUTF8(_ *Env, x *Call, args []any) (any, error) {
	if err := arity(x, args, 1); err != nil {
		return nil, err
	}
	n, err := intArg(x, args, 0, "length")
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	randomUTF8(b, 0, n)
	return b, nil
}

func coreRandomBytesInvalidUTF8(_ *Env, x *Call, args []any) (any, error) {
	if err := arity(x, args, 1); err != nil {
		return nil, err
	}
	n, err := intArg(x, args, 0, "length")
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, evalErrorf(x.Pos, nil, "%s:%s: length must be at least 1", x.Namespace, x.Name)
	}
	b := make([]byte, n)
	b[0] = 0x80 // a continuation byte cannot start a character
	randomUTF8(b, 1, n)
	return b, nil
}

// coreRandomBytesUnalignedUTF8 returns valid UTF-8 of length bytes in
// which a multi-byte character straddles offset unalignAt.
func coreRandomBytesUnalignedUTF8(_ *Env, x *Call, args []any) (any, error) {
	if err := arity(x, args, 2); err != nil {
		return nil, err
	}
	n, err := intArg(x, args, 0, "length")
	if err != nil {
		return nil, err
	}
	at, err := intArg(x, args, 1, "unalignAt")
	if err != nil {
		return nil, err
	}
	if at < 1 || at >= n {
		return nil, evalErrorf(x.Pos, nil, "%s:%s: unalignAt must be between 1 and length-1, got %d", x.Namespace, x.Name, at)
	}
	b := make([]byte, n)
	width := min(rand.IntN(3)+2, at+1, n-at+1)
	if width < 2 {
		width = 2
	}
	straddle := max(at-width+1, 0)
	if straddle+width > n {
		straddle = n - width
	}
	randomUTF8(b, 0, straddle)
	next := randomChar(b, straddle, width)
	randomUTF8(b, next, n)
	return b, nil
}

const asciiAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ1234567890!@#$%^&*()_+-=`~[]\\{}|;':\",./<>?"

func coreRandomASCII(_ *Env, x *Call, args []any) (any, error) {
	if err := arity(x, args, 1); err != nil {
		return nil, err
	}
	n, err := intArg(x, args, 0, "length")
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = asciiAlphabet[rand.IntN(len(asciiAlphabet))]
	}
	return b, nil
}

func randomCase(s string) string {
	var out strings.Builder
	for _, r := range s {
		if rand.IntN(2) == 0 {
			out.WriteRune(unicode.ToUpper(r))
		} else {
			out.WriteRune(unicode.ToLower(r))
		}
	}
	return out.String()
}

func coreRandomizeLetterCase(_ *Env, x *Call, args []any) (any, error) {
	if err := arity(x, args, 1); err != nil {
		return nil, err
	}
	s, err := stringArg(x, args, 0)
	if err != nil {
		return nil, err
	}
	return randomCase(s), nil
}

// coreRandomCaseNot returns s in a random letter case other than s's own;
// s must have a letter.
func coreRandomCaseNot(_ *Env, x *Call, args []any) (any, error) {
	if err := arity(x, args, 1); err != nil {
		return nil, err
	}
	s, err := stringArg(x, args, 0)
	if err != nil {
		return nil, err
	}
	if strings.ToUpper(s) == strings.ToLower(s) {
		return nil, evalErrorf(x.Pos, nil, "%s:%s: %q has no letter to change", x.Namespace, x.Name, s)
	}
	for {
		if r := randomCase(s); r != s {
			return r, nil
		}
	}
}

func coreCopyOfRange(_ *Env, x *Call, args []any) (any, error) {
	if err := arity(x, args, 3); err != nil {
		return nil, err
	}
	b, err := bytesArg(x, args, 0)
	if err != nil {
		return nil, err
	}
	from, err := intArg(x, args, 1, "from")
	if err != nil {
		return nil, err
	}
	to, err := intArg(x, args, 2, "to")
	if err != nil {
		return nil, err
	}
	if from > to || from > len(b) {
		return nil, evalErrorf(x.Pos, nil, "%s:%s: range [%d, %d) outside %d bytes", x.Namespace, x.Name, from, to, len(b))
	}
	out := make([]byte, to-from) // past the end pads with zeros, as Java's
	copy(out, b[from:])
	return out, nil
}

func coreBase64Encode(_ *Env, x *Call, args []any) (any, error) {
	if err := arity(x, args, 1); err != nil {
		return nil, err
	}
	b, err := bytesArg(x, args, 0)
	if err != nil {
		return nil, err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

func coreBase64Decode(_ *Env, x *Call, args []any) (any, error) {
	if err := arity(x, args, 1); err != nil {
		return nil, err
	}
	b, err := bytesArg(x, args, 0)
	if err != nil {
		return nil, err
	}
	out, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(b)))
	if err != nil {
		return nil, evalErrorf(x.Pos, nil, "%s:%s: %v", x.Namespace, x.Name, err)
	}
	return out, nil
}

func coreString(_ *Env, x *Call, args []any) (any, error) {
	if err := arity(x, args, 1); err != nil {
		return nil, err
	}
	b, err := bytesArg(x, args, 0)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// coreRandomBase64 returns the base64 text of length pseudo-random bytes
// drawn as Zilla's CoreFunctions.randomBase64 draws them, from a
// java.util.Random seeded with length: so a client and a server script
// (or Sluice and Zilla) that ask for the same length get the same text.
func coreRandomBase64(_ *Env, x *Call, args []any) (any, error) {
	if err := arity(x, args, 1); err != nil {
		return nil, err
	}
	n, err := intArg(x, args, 0, "length")
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	newJavaRandom(int64(n)).nextBytes(b)
	return base64.StdEncoding.EncodeToString(b), nil
}

// javaRandom is java.util.Random: a 48-bit linear congruential generator.
type javaRandom struct{ seed int64 }

const (
	javaRandomMultiplier = 0x5DEECE66D
	javaRandomMask       = 1<<48 - 1
)

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{seed: (seed ^ javaRandomMultiplier) & javaRandomMask}
}

func (r *javaRandom) next(bits uint) int32 {
	r.seed = (r.seed*javaRandomMultiplier + 0xB) & javaRandomMask
	return int32(r.seed >> (48 - bits))
}

// nextBytes fills b four bytes per int, low byte first, as Random.nextBytes.
func (r *javaRandom) nextBytes(b []byte) {
	for i := 0; i < len(b); {
		rnd := r.next(32)
		for n := min(len(b)-i, 4); n > 0; n-- {
			b[i] = byte(rnd)
			rnd >>= 8
			i++
		}
	}
}

// coreCapabilities is Zilla's core:capabilities("CHALLENGE", …): the bit
// mask of constants of core::stream::Capability, each bit the constant's
// ordinal, for option zilla:capabilities.
func coreCapabilities(e *Env, x *Call, args []any) (any, error) {
	if len(args) == 0 {
		return nil, evalErrorf(x.Pos, nil, "%s:%s takes at least one capability, got none", x.Namespace, x.Name)
	}
	libs, err := e.libraries()
	if err != nil {
		return nil, evalErrorf(x.Pos, err, "loading the IDL schema: %v", err)
	}
	t, _ := libs.schema.Lookup("core::stream::Capability")
	en, ok := t.(*idl.Enum)
	if !ok {
		return nil, evalErrorf(x.Pos, nil, "%s:%s: the schema has no enum core::stream::Capability", x.Namespace, x.Name)
	}
	var mask int64
	for i := range args {
		name, err := stringArg(x, args, i)
		if err != nil {
			return nil, err
		}
		ord := slices.IndexFunc(en.Values, func(v *idl.EnumValue) bool { return v.Name == name })
		if ord < 0 {
			return nil, evalErrorf(x.Args[i].Position(), nil, "%s:%s: unknown capability %q (%s)", x.Namespace, x.Name, name, enumConstants(en))
		}
		mask |= 1 << ord
	}
	return mask, nil
}
