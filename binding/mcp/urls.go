package mcp

import "bytes"

// QueryParamSpan returns where the raw value of URL u's first query
// parameter name starts and ends, so that a kind can read it or rewrite it
// in place; ok is false when the query (before any fragment) has no
// "name=" parameter. URL-mode elicitation binds an elicitation to its
// session and route through the state parameter this finds.
func QueryParamSpan(u []byte, name string) (start, end int, ok bool) {
	limit := len(u)
	if f := bytes.IndexByte(u, '#'); f >= 0 {
		limit = f
	}
	q := bytes.IndexByte(u[:limit], '?')
	if q < 0 {
		return 0, 0, false
	}
	for i := q + 1; i < limit; {
		end := limit
		if a := bytes.IndexByte(u[i:limit], '&'); a >= 0 {
			end = i + a
		}
		kv := u[i:end]
		if len(kv) > len(name) && kv[len(name)] == '=' && string(kv[:len(name)]) == name {
			return i + len(name) + 1, end, true
		}
		i = end + 1
	}
	return 0, 0, false
}

// QueryParam returns the raw value of URL u's first query parameter name
// ([QueryParamSpan]).
func QueryParam(u []byte, name string) ([]byte, bool) {
	start, end, ok := QueryParamSpan(u, name)
	if !ok {
		return nil, false
	}
	return u[start:end], true
}

// QueryParamOnce is [QueryParam] for a URL that comes from a client: ok is
// false too when the query names the parameter more than once (with a
// value or not), since another reader of the URL could take another one.
func QueryParamOnce(u []byte, name string) ([]byte, bool) {
	start, end, ok := QueryParamSpan(u, name)
	if !ok {
		return nil, false
	}
	limit := len(u)
	if f := bytes.IndexByte(u, '#'); f >= 0 {
		limit = f
	}
	n := 0
	for i := bytes.IndexByte(u[:limit], '?') + 1; i < limit; {
		e := limit
		if a := bytes.IndexByte(u[i:limit], '&'); a >= 0 {
			e = i + a
		}
		if k, _, _ := bytes.Cut(u[i:e], []byte("=")); string(k) == name {
			n++
		}
		i = e + 1
	}
	if n > 1 {
		return nil, false
	}
	return u[start:end], true
}
