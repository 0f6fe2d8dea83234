package h1

// maxEmptyLines bounds the empty lines skipped before a request line.
// RFC 9112 §2.2: "a server that is expecting to receive and parse a
// request-line SHOULD ignore at least one empty line (CRLF) received prior
// to the request-line"; old clients send one after a POST body.
const maxEmptyLines = 4

// RequestHead is a parsed request head (RFC 9112 §3, §5). Every []byte
// field is a view into the buffer given to [ParseRequestHead]: valid while
// that buffer is unchanged, so copy what must outlive the next read into
// it. After an error the fields are unspecified.
type RequestHead struct {
	// Method and Target are the request line's method and request-target,
	// as sent.
	Method, Target []byte
	// Minor is the minor version: 0 for HTTP/1.0, 1 for HTTP/1.1 and
	// any later HTTP/1.x.
	Minor int
	// Headers are the field lines in order, names as sent. The parser
	// truncates Headers and appends to it, so a caller that keeps one
	// RequestHead per connection with Headers = make([]Header, 0, n)
	// parses without allocating; a head with more fields than that
	// capacity grows the slice once, and it is reused from then on.
	// [Limits.MaxHeaders] bounds it.
	Headers []Header
	// ContentLength is the Content-Length value, or -1 when absent
	// (always -1 when Chunked).
	ContentLength int64
	// Chunked is set when the body is chunked: Transfer-Encoding: chunked.
	Chunked bool
	// KeepAlive is set when the connection persists after this exchange:
	// HTTP/1.1 unless Connection: close, HTTP/1.0 only with Connection:
	// keep-alive (RFC 9112 §9.3).
	KeepAlive bool
	// ExpectContinue is set for Expect: 100-continue in HTTP/1.1; RFC 9110
	// §10.1.1 has a server ignore it in HTTP/1.0. Other expectations are
	// ignored, as nginx does (RFC 9110 lets a server answer 417 instead).
	ExpectContinue bool
	// Host is the target URI's authority: the authority of an
	// absolute-form or authority-form target, which RFC 9112 §3.2.2 has
	// replace Host, and otherwise the Host field; nil when neither exists.
	Host []byte
	// Upgrade is the first Upgrade field's value when Connection lists
	// "upgrade" in HTTP/1.1, else nil: RFC 9110 §7.8 has a server ignore
	// Upgrade in HTTP/1.0, and a sender must name it in Connection.
	Upgrade []byte
}

// ParseRequestHead parses the request head at the start of buf and returns
// its length n, so that buf[n:] starts the body or the next pipelined
// request. It returns (0, [ErrIncomplete]) while buf holds only part of a
// valid head, and an [*Error] as soon as the head is certain to be
// invalid or to exceed lim, even if incomplete.
//
// Up to four empty lines before the request line are skipped and counted
// in n. A bare LF ends a line like CRLF, as RFC 9112 §2.2 allows and
// net/http and nginx do; a bare CR is an error. Method and version are
// case-sensitive; the version is HTTP/1.0 or HTTP/1.1, other HTTP/x.y is a
// 505. The target must be origin-form, absolute-form, authority-form for
// CONNECT (and only then) or asterisk-form for OPTIONS (and only then),
// with valid percent-encoding in its path. An HTTP/1.1 request must have a
// Host field, no request more than one.
//
// It does not allocate unless h.Headers must grow.
func ParseRequestHead(buf []byte, h *RequestHead, lim Limits) (n int, err error) {
	lim = lim.withDefaults()
	hb := clipHead(buf, lim.MaxHeaderBytes)
	return hb.result(parseRequest(hb.b, h, &lim))
}

func parseRequest(b []byte, h *RequestHead, lim *Limits) (int, error) {
	*h = RequestHead{Headers: h.Headers[:0], ContentLength: -1}
	i := 0
	for empty := 0; ; empty++ {
		if i >= len(b) {
			return 0, ErrIncomplete
		}
		if c := b[i]; c != '\r' && c != '\n' {
			break
		}
		if empty == maxEmptyLines {
			return 0, errLeadingLines
		}
		next, err := eol(b, i, nil)
		if err != nil {
			return 0, err
		}
		i = next
	}

	// request-line = method SP request-target SP HTTP-version (RFC 9112
	// §3), with exactly one SP at each place: §3 allows a recipient to
	// split on other whitespace but warns of smuggling if it does.
	ms := i
	for i < len(b) && class[b[i]]&clToken != 0 {
		i++
	}
	if i >= len(b) {
		return 0, ErrIncomplete
	}
	if b[i] != ' ' || i == ms {
		return 0, errMethod
	}
	h.Method = b[ms:i]
	i++
	ts := i
	i = skipTarget(b, i)
	// RFC 9112 §3: "A server that receives a request-target longer than
	// any URI it wishes to parse MUST respond with a 414 (URI Too Long)".
	// Checked before waiting for the line to end.
	if i-ts > lim.MaxTarget {
		return 0, errTargetTooLong
	}
	if i >= len(b) {
		return 0, ErrIncomplete
	}
	switch {
	case b[i] == '\r' || b[i] == '\n' || b[i] == ' ' && i == ts:
		return 0, errRequestLine
	case b[i] != ' ':
		return 0, errTarget
	}
	h.Target = b[ts:i]
	i++
	major, minor, i, err := scanVersion(b, i, errVersionSyntax)
	if err != nil {
		return 0, err
	}
	if i, err = eol(b, i, errVersionSyntax); err != nil {
		return 0, err
	}
	if major != 1 {
		return 0, errVersion
	}
	// RFC 9110 §2.5: a later minor version is processed "as if it were in
	// the highest minor version within that major version to which the
	// recipient is conformant", as Zilla's server does.
	h.Minor = min(minor, 1)
	authority, err := checkTarget(h.Method, h.Target)
	if err != nil {
		return 0, err
	}
	h.Host = authority

	s := scanner{b: b, i: i}
	hosts, expect := 0, false
	for {
		name, value, err := s.field(&h.Headers, lim.MaxHeaders)
		if err != nil {
			return 0, err
		}
		if name == nil {
			break
		}
		switch len(name) {
		case 4:
			if equalFold(name, "host") {
				// RFC 9112 §3.2: 400 for "more than one Host header
				// field line or a Host header field with an invalid
				// field value".
				if hosts++; hosts > 1 {
					return 0, errManyHosts
				}
				if !validAuthority(value, false, false) {
					return 0, errHost
				}
				if authority == nil {
					h.Host = value
				}
			}
		case 6:
			if equalFold(name, "expect") {
				for i := 0; i <= len(value); {
					var e []byte
					e, i = NextElement(value, i)
					expect = expect || equalFold(e, "100-continue")
				}
			}
		case 7:
			if h.Upgrade == nil && equalFold(name, "upgrade") {
				h.Upgrade = value
			}
		}
	}
	// RFC 9112 §3.2: 400 "to any HTTP/1.1 request message that lacks a
	// Host header field", whatever the target's form.
	if h.Minor >= 1 && hosts == 0 && !(lim.AbsoluteWithoutHost && authority != nil) {
		return 0, errNoHost
	}
	if h.ContentLength, h.Chunked, err = s.f.resolve(h.Minor, true); err != nil {
		return 0, err
	}
	h.KeepAlive = s.f.persistent(h.Minor)
	h.ExpectContinue = expect && h.Minor >= 1
	if !s.f.upgrade || h.Minor == 0 {
		h.Upgrade = nil
	}
	return s.i, nil
}

// checkTarget validates the request-target's form against the method
// (RFC 9112 §3.2) and returns the authority it carries, if any.
func checkTarget(method, t []byte) (authority []byte, err error) {
	switch {
	case string(method) == "CONNECT":
		// §3.2.3: authority-form, "uri-host ':' port", and only for
		// CONNECT.
		if !validAuthority(t, true, true) {
			return nil, errTarget
		}
		return t, nil
	case t[0] == '/':
		if !validPercent(path(t)) {
			return nil, errTarget
		}
		return nil, nil
	case len(t) == 1 && t[0] == '*':
		// §3.2.4: asterisk-form is "only used for a server-wide
		// OPTIONS request".
		if string(method) != "OPTIONS" {
			return nil, errTarget
		}
		return nil, nil
	}
	// §3.2.2: absolute-form, accepted from any client (RFC 9112 says a
	// server MUST), restricted here to hierarchical URIs with a host:
	// scheme "://" authority path-abempty ["?" query].
	i := 0
	for i < len(t) && ('a' <= t[i]|0x20 && t[i]|0x20 <= 'z' || i > 0 && (isDigit(t[i]) || t[i] == '+' || t[i] == '-' || t[i] == '.')) {
		i++
	}
	if i == 0 || len(t) < i+3 || string(t[i:i+3]) != "://" {
		return nil, errTarget
	}
	a := i + 3
	e := a
	for e < len(t) && t[e] != '/' && t[e] != '?' {
		e++
	}
	if !validAuthority(t[a:e], true, false) || !validPercent(path(t[e:])) {
		return nil, errTarget
	}
	return t[a:e], nil
}

// path returns t up to its query.
func path(t []byte) []byte {
	for i, c := range t {
		if c == '?' {
			return t[:i]
		}
	}
	return t
}
