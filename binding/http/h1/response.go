package h1

// ResponseHead is a parsed response head (RFC 9112 §4, §5). Every []byte
// field is a view into the buffer given to [ParseResponseHead]: valid while
// that buffer is unchanged. After an error the fields are unspecified.
type ResponseHead struct {
	// Minor is the minor version: 0 for HTTP/1.0, 1 for HTTP/1.1 (or a
	// later HTTP/1.x, which RFC 9110 §2.5 has a recipient treat as the
	// highest minor version it knows).
	Minor int
	// Status is the status code, 100 to 599.
	Status int
	// Reason is the reason phrase, possibly empty; RFC 9112 §4 has a
	// client ignore it.
	Reason []byte
	// Headers are the field lines in order; see [RequestHead.Headers] for
	// how the slice is reused.
	Headers []Header
	// ContentLength is the Content-Length value, or -1 when absent
	// (always -1 when Chunked).
	ContentLength int64
	// Chunked is set when Transfer-Encoding is chunked.
	Chunked bool
	// KeepAlive is set when the version and Connection field let the
	// connection persist (RFC 9112 §9.3). A response whose body is
	// delimited by the connection closing, because it has neither
	// Content-Length nor chunked and its status and request method allow
	// a body, does not persist whatever this says; only the caller knows
	// the method, so it decides the framing of RFC 9112 §6.3.
	KeepAlive bool
}

// ParseResponseHead parses the response head at the start of buf and
// returns its length n. The conventions are those of [ParseRequestHead]:
// (0, [ErrIncomplete]) for a valid partial head, an [*Error] as soon as
// the head is certain to be invalid or larger than lim.MaxHeaderBytes, a
// bare LF accepted as a line end. The status line is HTTP/1.x, SP, three
// digits from 100 to 599, then SP and the reason phrase; the SP before an
// empty reason may be missing, as many servers omit it. No empty lines are
// skipped before the status line. Transfer-Encoding is accepted only as
// chunked, the one coding this package decodes.
//
// It does not allocate unless h.Headers must grow.
func ParseResponseHead(buf []byte, h *ResponseHead, lim Limits) (n int, err error) {
	lim = lim.withDefaults()
	hb := clipHead(buf, lim.MaxHeaderBytes)
	return hb.result(parseResponse(hb.b, h, &lim))
}

func parseResponse(b []byte, h *ResponseHead, lim *Limits) (int, error) {
	*h = ResponseHead{Headers: h.Headers[:0], ContentLength: -1}
	major, minor, i, err := scanVersion(b, 0, errStatusLine)
	if err != nil {
		return 0, err
	}
	if major != 1 {
		return 0, errResponseVersion
	}
	h.Minor = minor
	if i >= len(b) {
		return 0, ErrIncomplete
	}
	if b[i] != ' ' {
		return 0, errStatusLine
	}
	i++
	for k := 0; k < 3; k++ {
		if i >= len(b) {
			return 0, ErrIncomplete
		}
		if !isDigit(b[i]) {
			return 0, errStatusLine
		}
		h.Status = h.Status*10 + int(b[i]-'0')
		i++
	}
	if h.Status < 100 || h.Status > 599 {
		return 0, errStatusCode
	}
	if i < len(b) && b[i] == ' ' {
		i++
		rs := i
		for i < len(b) && class[b[i]]&clValue != 0 {
			i++
		}
		h.Reason = b[rs:i]
	}
	if i, err = eol(b, i, errStatusLine); err != nil {
		return 0, err
	}

	s := scanner{b: b, i: i}
	if err := s.rest(&h.Headers, lim.MaxHeaders); err != nil {
		return 0, err
	}
	if h.ContentLength, h.Chunked, err = s.f.resolve(h.Minor, false); err != nil {
		return 0, err
	}
	h.KeepAlive = s.f.persistent(h.Minor)
	return s.i, nil
}
