package jwtguard

import "errors"

var (
	// ErrFetchKeys is returned by New when the JSON Web Key Set at the keys
	// URL (or the issuer's well-known one) cannot be fetched or read.
	ErrFetchKeys = errors.New("guard/jwt: fetch keys")

	// ErrNoKeys is returned by New when no key that can verify a signature
	// is left after loading.
	ErrNoKeys = errors.New("guard/jwt: no usable keys")
)
