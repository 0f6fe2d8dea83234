package h1

// Internals the black-box tests check against oracles of their own.
var (
	ValidIPv6      = validIPv6
	ValidAuthority = validAuthority
)

var (
	SkipValue  = skipValue
	SkipTarget = skipTarget
)
