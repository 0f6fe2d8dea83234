package spec

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// The methods of a string in ${…}: JUEL invokes the receiver's Java
// String methods, so Zilla's scripts write "5ca1ab1e-…".concat(affinity)
// and "…redirect_uri=%s".formatted(http:encodeQuery(uri)). These are the
// String methods scripts use, with Java's semantics: indexes count UTF-16
// units, getBytes() gives UTF-8, formatted is String.format. Arguments are
// coerced to the parameter types as JUEL coerces them: null to "" for a
// string, a number or boolean to its Java string, a numeric string to an
// integer.
type stringMethod struct {
	min, max int // the argument counts taken; max < 0 for varargs
	fn       func(s string, x *MethodCall, args []any) (any, error)
}

var stringMethods map[string]stringMethod

func init() {
	stringMethods = map[string]stringMethod{
		"concat": {1, 1, func(s string, x *MethodCall, args []any) (any, error) {
			t, err := strArg(x, args, 0)
			return s + t, err
		}},
		"formatted": {0, -1, func(s string, x *MethodCall, args []any) (any, error) {
			return javaFormat(x, s, args)
		}},
		"length": {0, 0, func(s string, _ *MethodCall, _ []any) (any, error) {
			return int64(len(utf16.Encode([]rune(s)))), nil
		}},
		"isEmpty":  {0, 0, func(s string, _ *MethodCall, _ []any) (any, error) { return s == "", nil }},
		"toString": {0, 0, func(s string, _ *MethodCall, _ []any) (any, error) { return s, nil }},
		"toUpperCase": {0, 0, func(s string, _ *MethodCall, _ []any) (any, error) {
			return strings.ToUpper(s), nil
		}},
		"toLowerCase": {0, 0, func(s string, _ *MethodCall, _ []any) (any, error) {
			return strings.ToLower(s), nil
		}},
		"trim": {0, 0, func(s string, _ *MethodCall, _ []any) (any, error) {
			// Java's trim drops the characters up to U+0020 at both ends.
			return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' }), nil
		}},
		"substring": {1, 2, javaSubstring},
		"replace": {2, 2, func(s string, x *MethodCall, args []any) (any, error) {
			from, err := strArg(x, args, 0)
			if err != nil {
				return nil, err
			}
			to, err := strArg(x, args, 1)
			if err != nil {
				return nil, err
			}
			return strings.ReplaceAll(s, from, to), nil
		}},
		"startsWith": {1, 1, stringPredicate(strings.HasPrefix)},
		"endsWith":   {1, 1, stringPredicate(strings.HasSuffix)},
		"contains":   {1, 1, stringPredicate(strings.Contains)},
		"equals": {1, 1, func(s string, _ *MethodCall, args []any) (any, error) {
			t, ok := args[0].(string)
			return ok && t == s, nil
		}},
		"indexOf": {1, 1, func(s string, x *MethodCall, args []any) (any, error) {
			t, err := strArg(x, args, 0)
			if err != nil {
				return nil, err
			}
			i := strings.Index(s, t)
			if i < 0 {
				return int64(-1), nil
			}
			return int64(len(utf16.Encode([]rune(s[:i])))), nil
		}},
		"repeat": {1, 1, func(s string, x *MethodCall, args []any) (any, error) {
			n, err := intArgOf(x, args, 0)
			if err != nil {
				return nil, err
			}
			if n < 0 {
				return nil, evalErrorf(x.Args[0].Position(), nil, ".repeat: count is negative: %d", n)
			}
			if n > 0 && int64(len(s)) > (1<<26)/n {
				return nil, evalErrorf(x.Args[0].Position(), nil, ".repeat: %d copies of %d bytes is too long", n, len(s))
			}
			return strings.Repeat(s, int(n)), nil
		}},
		"getBytes": {0, 1, javaGetBytes},
	}
}

// callStringMethod applies the String method x to s.
func callStringMethod(x *MethodCall, s string, args []any) (any, error) {
	m, ok := stringMethods[x.Name]
	if !ok {
		return nil, evalErrorf(x.Pos, nil, "unknown method .%s on string %s (methods: %s)", x.Name, x.Receiver, strings.Join(stringMethodNames(), ", "))
	}
	if len(args) < m.min || m.max >= 0 && len(args) > m.max {
		want := strconv.Itoa(m.min)
		switch {
		case m.max < 0:
			want = "at least " + want
		case m.max != m.min:
			want += " or " + strconv.Itoa(m.max)
		}
		return nil, evalErrorf(x.Pos, nil, ".%s takes %s argument(s), got %d", x.Name, want, len(args))
	}
	return m.fn(s, x, args)
}

func stringMethodNames() []string {
	names := make([]string, 0, len(stringMethods))
	for n := range stringMethods {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func stringPredicate(f func(s, t string) bool) func(string, *MethodCall, []any) (any, error) {
	return func(s string, x *MethodCall, args []any) (any, error) {
		t, err := strArg(x, args, 0)
		if err != nil {
			return nil, err
		}
		return f(s, t), nil
	}
}

// strArg coerces argument i to a Java String as JUEL does.
func strArg(x *MethodCall, args []any, i int) (string, error) {
	s, ok := javaString(args[i])
	if !ok {
		return "", evalErrorf(x.Args[i].Position(), nil, ".%s: argument %d must be a string, got %s", x.Name, i+1, describeValue(args[i]))
	}
	return s, nil
}

// javaString is String.valueOf of a value, with EL's null as "". Bytes,
// lists and builders have no string form a script could rely on.
func javaString(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", true
	case string:
		return v, true
	case int64:
		return strconv.FormatInt(v, 10), true
	case *big.Int:
		return v.String(), true
	case float64:
		return javaDouble(v), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}

// javaDouble renders v as Java's Double.toString: 1.0, 0.001, 1.0E7,
// 1.5E-4, NaN, Infinity.
func javaDouble(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	case v == 0:
		if math.Signbit(v) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(v); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(v, 'E', -1, 64)
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// intArgOf coerces argument i to a Java int or long as JUEL does: an
// integer, or a string that spells one.
func intArgOf(x *MethodCall, args []any, i int) (int64, error) {
	switch v := args[i].(type) {
	case int64:
		return v, nil
	case string:
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, evalErrorf(x.Args[i].Position(), nil, ".%s: argument %d must be an integer, got %s", x.Name, i+1, describeValue(args[i]))
}

// javaSubstring is substring(begin) and substring(begin, end), in UTF-16
// units, failing as Java's StringIndexOutOfBoundsException would.
func javaSubstring(s string, x *MethodCall, args []any) (any, error) {
	u := utf16.Encode([]rune(s))
	begin, err := intArgOf(x, args, 0)
	if err != nil {
		return nil, err
	}
	end := int64(len(u))
	if len(args) == 2 {
		if end, err = intArgOf(x, args, 1); err != nil {
			return nil, err
		}
	}
	if begin < 0 || end > int64(len(u)) || begin > end {
		return nil, evalErrorf(x.Pos, nil, ".substring: range [%d, %d) out of bounds for length %d", begin, end, len(u))
	}
	return string(utf16.Decode(u[begin:end])), nil
}

// javaGetBytes is getBytes() (UTF-8, the charset Zilla's builds run with)
// and getBytes(charset) for UTF-8, US-ASCII and ISO-8859-1.
func javaGetBytes(s string, x *MethodCall, args []any) (any, error) {
	cs := "UTF-8"
	if len(args) == 1 {
		var err error
		if cs, err = strArg(x, args, 0); err != nil {
			return nil, err
		}
	}
	switch strings.ToUpper(strings.ReplaceAll(cs, "_", "-")) {
	case "UTF-8", "UTF8":
		return []byte(s), nil
	case "US-ASCII", "ASCII", "ISO-8859-1", "ISO8859-1", "LATIN1":
		limit := rune(0xff)
		if strings.Contains(strings.ToUpper(cs), "ASCII") {
			limit = 0x7f
		}
		b := make([]byte, 0, len(s))
		for _, r := range s {
			if r > limit {
				r = '?' // Java replaces what the charset cannot encode
			}
			b = append(b, byte(r))
		}
		return b, nil
	}
	return nil, evalErrorf(x.Args[0].Position(), nil, ".getBytes: unsupported charset %q (want UTF-8, US-ASCII or ISO-8859-1)", cs)
}

// javaFormat is Java's String.format(format, args…) for the conversions
// scripts use: %s %S %d %x %X %o %c %b %n %%, with an argument index
// (%2$s), the flags - 0 + and space, a width and, for %s, a precision.
func javaFormat(x *MethodCall, format string, args []any) (string, error) {
	var b strings.Builder
	next := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		spec, conv, n, ok := scanFormatSpec(format[j:])
		if !ok {
			return "", evalErrorf(x.Pos, nil, ".%s: bad format specifier %q at offset %d", x.Name, format[i:min(len(format), i+n+2)], i)
		}
		i = j + n - 1
		switch conv {
		case '%':
			b.WriteString(padJava(spec, "%"))
			continue
		case 'n':
			b.WriteByte('\n')
			continue
		}
		idx := next
		if spec.index > 0 {
			idx = spec.index - 1
		} else {
			next++
		}
		if idx >= len(args) {
			return "", evalErrorf(x.Pos, nil, ".%s: format %q needs argument %d, got %d", x.Name, format, idx+1, len(args))
		}
		s, err := formatOne(x, spec, conv, args[idx])
		if err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// formatSpec is one %[index$][flags][width][.precision] specifier.
type formatSpec struct {
	index, width, prec int // 0 index: the next argument; -1 prec: none
	flags              string
}

// scanFormatSpec reads a specifier after its %, returning its length.
func scanFormatSpec(s string) (formatSpec, byte, int, bool) {
	sp := formatSpec{prec: -1}
	i := 0
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<20 {
			n = n*10 + int(s[i]-'0')
			i++
		}
		return n
	}
	start := i
	if n := digits(); i < len(s) && s[i] == '$' && i > start && n > 0 {
		sp.index = n
		i++
	} else {
		i = start
	}
	for i < len(s) && strings.IndexByte("-0+ ", s[i]) >= 0 {
		sp.flags += string(s[i])
		i++
	}
	sp.width = digits()
	if i < len(s) && s[i] == '.' {
		i++
		sp.prec = digits()
	}
	if i >= len(s) {
		return sp, 0, i, false
	}
	conv := s[i]
	i++
	if strings.IndexByte("sSdxXocbBn%", conv) < 0 {
		return sp, conv, i, false
	}
	return sp, conv, i, true
}

// padJava pads s to the specifier's width, left-justified with -.
func padJava(sp formatSpec, s string) string {
	n := len([]rune(s))
	if n >= sp.width {
		return s
	}
	pad := strings.Repeat(" ", sp.width-n)
	if strings.Contains(sp.flags, "-") {
		return s + pad
	}
	return pad + s
}

func formatOne(x *MethodCall, sp formatSpec, conv byte, arg any) (string, error) {
	switch conv {
	case 's', 'S':
		s, ok := javaString(arg)
		if arg == nil {
			s, ok = "null", true // String.format prints null, unlike EL coercion
		}
		if !ok {
			return "", evalErrorf(x.Pos, nil, ".%s: %%%c cannot format %s", x.Name, conv, describeValue(arg))
		}
		if sp.prec >= 0 && sp.prec < len([]rune(s)) {
			s = string([]rune(s)[:sp.prec])
		}
		if conv == 'S' {
			s = strings.ToUpper(s)
		}
		return padJava(sp, s), nil
	case 'b', 'B':
		s := "true"
		switch v := arg.(type) {
		case nil:
			s = "false"
		case bool:
			s = strconv.FormatBool(v)
		}
		if conv == 'B' {
			s = strings.ToUpper(s)
		}
		return padJava(sp, s), nil
	case 'c':
		n, ok := arg.(int64)
		if s, isStr := arg.(string); isStr && len([]rune(s)) == 1 {
			n, ok = int64([]rune(s)[0]), true
		}
		if !ok || n < 0 || n > 0x10ffff {
			return "", evalErrorf(x.Pos, nil, ".%s: %%c cannot format %s", x.Name, describeValue(arg))
		}
		return padJava(sp, string(rune(n))), nil
	}
	n, ok := arg.(int64)
	if !ok {
		return "", evalErrorf(x.Pos, nil, ".%s: %%%c needs an integer, got %s", x.Name, conv, describeValue(arg))
	}
	verb := string(conv)
	if conv != 'd' && n < 0 {
		// Java prints a negative long in hex or octal as its two's
		// complement.
		return fmt.Sprintf("%"+goFlags(sp)+verb, uint64(n)), nil
	}
	return fmt.Sprintf("%"+goFlags(sp)+verb, n), nil
}

// goFlags renders the flags and width of sp for Go's fmt, whose meaning
// for integers is Java's.
func goFlags(sp formatSpec) string {
	s := sp.flags
	if sp.width > 0 {
		s += strconv.Itoa(sp.width)
	}
	return s
}
