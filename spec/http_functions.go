package spec

import "strings"

// scopeFuncs holds the functions of an IDL namespace that are no builder
// or matcher: those of Zilla's per-binding function classes that scripts
// use, such as HttpFunctions.encodeQuery.
var scopeFuncs = map[string]map[string]funcImpl{
	"http": {
		"encodeQuery": httpEncodeQuery,
	},
}

// httpEncodeQuery is Zilla's http:encodeQuery(value): Java's
// URLEncoder.encode in UTF-8 with the + for a space replaced by %20. It
// keeps letters, digits and . - * _, and escapes every other byte as %XX
// in upper case.
func httpEncodeQuery(_ *Env, x *Call, args []any) (any, error) {
	if err := arity(x, args, 1); err != nil {
		return nil, err
	}
	s, err := stringArg(x, args, 0)
	if err != nil {
		return nil, err
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '-', c == '*', c == '_':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		}
	}
	return b.String(), nil
}
