// Package jwtguard is the jwt guard type: bearer tokens that are JSON Web
// Tokens signed by an identity provider, configured as Zilla's guard-jwt
// is.
//
//	guards:
//	  jwt0:
//	    type: jwt
//	    options:
//	      issuer: https://auth.example.com     # required: iss must equal it
//	      audience: https://api.example.com    # required: aud must hold it
//	      roles: realm_access.roles            # default scope
//	      identity: sub                        # the default
//	      attributes: {email: email}           # name: claim path
//	      keys: https://auth.example.com/jwks  # or a list of JWKs
//	      challenge: 30                        # seconds before expiry
//
// # Concepts
//
//   - Keys are JWKs given in keys, or the JSON Web Key Set fetched once by
//     New from the keys URL (default <issuer>/.well-known/jwks.json). A
//     token's kid picks its key. A token with an unknown kid is refused and
//     makes the guard fetch the set again in the background (one fetch at
//     a time, at most once in 30 s by the guard's clock), so a provider's
//     new key is accepted by the next request.
//   - [guard.Handler.Reauthorize] verifies a compact JWS without I/O and
//     opens a session: identity from the identity claim, roles from the
//     roles claim (a space-separated string such as OAuth's scope, or an
//     array of strings), attributes from their claims as text. Claim
//     paths are dotted (realm_access.roles); a claim named by the whole
//     path is taken first.
//   - Each worker's Handler remembers up to 1024 verified tokens, so a
//     client sending the same token on every request is verified once;
//     exp and nbf are checked on every call.
//   - Sessions belong to the guard, so every worker's Handler sees every
//     session. Ids come from one counter per guard; at most 1<<20 sessions
//     are open at once, and past that Reauthorize refuses.
//   - [guard.Handler.Challenge] holds once per session, from challenge
//     seconds before exp until exp.
//
// # Differences from Zilla
//
// Deliberate, to make the guard safe to face the internet:
//
//   - issuer and audience are required, by the schema and by New, where
//     Zilla would start and then refuse every token. challenge is whole
//     seconds (Zilla's schema takes any number).
//   - Only asymmetric algorithms verify (RS*, PS*, ES*, EdDSA), never none
//     or HMAC. A JWK's alg, when present, must equal the token's; a JWK
//     without alg takes the algorithms that fit its key type and curve,
//     where Zilla refuses every token for it. RSA keys under 2048 bits
//     and oct keys fail New when configured and are skipped in a fetched
//     set; keys whose use is enc are skipped in both (Zilla's examples
//     list one).
//   - A token is expired from its exp on, as RFC 7519 §4.1.4 says; Zilla
//     still accepts it at exp itself. Tokens with crit or b64 headers and
//     tokens over 32 KiB are refused.
//   - Each Reauthorize opens its own session, where Zilla shares one
//     between calls with the same identity; Deauthorize releases exactly
//     what Reauthorize opened.
//   - Unknown sessions answer 0 from ExpiresAt and ExpiringAt, as the
//     guard SPI says, where Zilla answers ExpiresNever. Verify with no
//     roles holds for any open session.
//   - The key set at the keys URL is fetched again when a token names an
//     unknown kid; Zilla reads it once, at start.
//
// Refusals are logged at Debug with their reason, never with the token.
//
// # Usage
//
// Import the package for its side effect, as cmd/sluice does:
//
//	import _ "github.com/sluicehq/sluice/engine/guard/jwtguard"
package jwtguard
