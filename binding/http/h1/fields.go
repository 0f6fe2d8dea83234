package h1

import (
	"bytes"
	"math"
)

// Header is one field line as views into the parsed buffer: Name as sent
// (case preserved) and Value with leading and trailing OWS removed. The
// views are valid as long as the buffer given to the parser is unchanged;
// copy them to keep them.
type Header struct{ Name, Value []byte }

// Lookup returns the value of the first field in hs named name, ignoring
// ASCII case, and whether there is one. It does not allocate.
func Lookup(hs []Header, name string) (value []byte, ok bool) {
	for i := range hs {
		if n := hs[i].Name; len(n) == len(name) && EqualFold(n, name) {
			return hs[i].Value, true
		}
	}
	return nil, false
}

// EqualFold reports whether a equals b, a string or a byte slice, ignoring
// ASCII case, the way field names and tokens compare. Unlike
// [bytes.EqualFold] it folds no other letters: "ſ" (U+017F) is not "s". It
// does not allocate.
func EqualFold[S string | []byte](a []byte, b S) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// HopByHop reports whether name, in any case, is a field of the
// connection rather than of the message: Connection, Keep-Alive, TE,
// Trailer, Transfer-Encoding or Upgrade. A gateway does not forward them
// (RFC 9110 §7.6.1); it frames the message for the next hop itself.
func HopByHop(name []byte) bool {
	switch len(name) {
	case 2:
		return EqualFold(name, "te")
	case 7:
		return EqualFold(name, "upgrade") || EqualFold(name, "trailer")
	case 10:
		return EqualFold(name, "connection") || EqualFold(name, "keep-alive")
	case 17:
		return EqualFold(name, "transfer-encoding")
	}
	return false
}

// ValidHeaderName reports whether name is a field name: a non-empty token
// (RFC 9110 §5.1).
func ValidHeaderName(name []byte) bool { return isToken(name) }

// ValidHeaderValue reports whether value may be sent as a field value as
// it is: field-vchar, SP and HTAB only (RFC 9110 §5.5), so no CR, LF, NUL
// or other control byte. It checks eight bytes at a time (skipValue).
func ValidHeaderValue(value []byte) bool { return skipValue(value, 0) == len(value) }

// ValidMethod reports whether method is a method name: a non-empty token
// (RFC 9110 §9.1).
func ValidMethod(method []byte) bool { return isToken(method) }

// scanner walks the field lines of a head (RFC 9112 §5), with b[i] the
// start of the next line, and collects in f the fields that frame the
// message. A bare LF ends a line as CRLF does (RFC 9112 §2.2).
type scanner struct {
	b []byte
	i int
	f framing
}

// field reads the field line at s.i, appends it to *hs and, if it is
// Connection, Content-Length or Transfer-Encoding, reads it into s.f,
// failing as the framing method does. At the empty
// line that ends the section it returns a nil name and no error, with s.i
// past that line. It returns ErrIncomplete when b ends before the line
// does, with s.i unchanged. When *hs already holds max fields it returns
// errTooManyHeaders instead of reading a further field, once the line is
// certain to be a field (it is not the empty line, and a line that starts
// with whitespace is reported as obs-fold first).
func (s *scanner) field(hs *[]Header, max int) (name, value []byte, err error) {
	b, i := s.b, s.i
	if i >= len(b) {
		return nil, nil, ErrIncomplete
	}
	switch b[i] {
	case '\r':
		if i+1 >= len(b) {
			return nil, nil, ErrIncomplete
		}
		if b[i+1] != '\n' {
			return nil, nil, errLineEnd
		}
		s.i = i + 2
		return nil, nil, nil
	case '\n':
		s.i = i + 1
		return nil, nil, nil
	case ' ', '\t':
		// RFC 9112 §5.2: a server MUST reject obs-fold in a request
		// (or replace it by SP) unless in message/http; rejecting it is
		// the only safe choice for a gateway, which might otherwise
		// forward a different header set than the origin sees. The same
		// check rejects whitespace before the first field line (§2.2).
		return nil, nil, errObsFold
	}
	if len(*hs) >= max {
		return nil, nil, errTooManyHeaders
	}
	ns := i
	for i < len(b) && class[b[i]]&clToken != 0 {
		i++
	}
	if i >= len(b) {
		return nil, nil, ErrIncomplete
	}
	// RFC 9112 §5.1: "No whitespace is allowed between the field name
	// and colon ... a server MUST reject, with a response status code of
	// 400 (Bad Request), any received request message that contains
	// whitespace between a header field name and colon."
	if b[i] != ':' || i == ns {
		return nil, nil, errHeaderName
	}
	name = b[ns:i]
	i++
	for i < len(b) && isOWS(b[i]) {
		i++
	}
	vs := i
	i = skipValue(b, i)
	ve := i
	switch {
	case i >= len(b):
		return nil, nil, ErrIncomplete
	case b[i] == '\r':
		if i+1 >= len(b) {
			return nil, nil, ErrIncomplete
		}
		if b[i+1] != '\n' {
			return nil, nil, errHeaderValue
		}
		i += 2
	case b[i] == '\n':
		i++
	default:
		// RFC 9110 §5.5: CR, LF and NUL are invalid in a field value
		// and other CTLs are not field-vchar; net/http's server rejects
		// the same set.
		return nil, nil, errHeaderValue
	}
	for ve > vs && isOWS(b[ve-1]) {
		ve--
	}
	s.i = i
	value = b[vs:ve]
	*hs = append(*hs, Header{Name: name, Value: value})
	switch len(name) {
	case 10:
		if equalFold(name, "connection") {
			s.f.connection(value)
		}
	case 14:
		if equalFold(name, "content-length") {
			err = s.f.contentLength(value)
		}
	case 17:
		if equalFold(name, "transfer-encoding") {
			err = s.f.transferEncoding(value)
		}
	}
	return name, value, err
}

// rest reads the field lines to the end of the section.
func (s *scanner) rest(hs *[]Header, max int) error {
	for {
		name, _, err := s.field(hs, max)
		if err != nil || name == nil {
			return err
		}
	}
}

// headBuf is the part of a buffer that a head parser reads: at most
// MaxHeaderBytes of it.
type headBuf struct {
	b     []byte
	trunc bool // b is shorter than the buffer
}

func clipHead(buf []byte, max int) headBuf {
	if len(buf) > max {
		return headBuf{buf[:max], true}
	}
	return headBuf{buf, false}
}

// result is what a head parser returns for the outcome of parsing hb.b: a
// head still incomplete at MaxHeaderBytes is too large, and any error
// comes with n == 0.
func (hb headBuf) result(n int, err error) (int, error) {
	if err != nil {
		if err == ErrIncomplete && hb.trunc {
			err = errHeadTooLarge
		}
		return 0, err
	}
	return n, nil
}

// eol expects a line terminator at b[i], CRLF or LF, and returns the index
// after it. A byte other than CR or LF is bad.
func eol(b []byte, i int, bad error) (int, error) {
	if i >= len(b) {
		return 0, ErrIncomplete
	}
	switch b[i] {
	case '\r':
		if i+1 >= len(b) {
			return 0, ErrIncomplete
		}
		if b[i+1] != '\n' {
			return 0, errLineEnd
		}
		return i + 2, nil
	case '\n':
		return i + 1, nil
	}
	return 0, bad
}

// scanVersion reads HTTP-version (RFC 9112 §2.3: "HTTP/" DIGIT "." DIGIT,
// case-sensitive) at b[i]. It checks each byte as it arrives, so garbage
// is reported before the version is complete.
func scanVersion(b []byte, i int, bad error) (major, minor, next int, err error) {
	const name = "HTTP/"
	for k := 0; k < 8; k++ {
		if i+k >= len(b) {
			return 0, 0, 0, ErrIncomplete
		}
		c := b[i+k]
		switch {
		case k < len(name):
			if c != name[k] {
				return 0, 0, 0, bad
			}
		case k == 6:
			if c != '.' {
				return 0, 0, 0, bad
			}
		default:
			if !isDigit(c) {
				return 0, 0, 0, bad
			}
		}
	}
	return int(b[i+5] - '0'), int(b[i+7] - '0'), i + 8, nil
}

// framing collects the fields that decide a message's body length and
// persistence (RFC 9112 §6.3, §9.3) as they are read.
type framing struct {
	cl        int64
	clSeen    bool
	te        bool // Transfer-Encoding present
	chunked   int  // chunked codings seen
	lastChunk bool // the last coding seen is chunked
	other     bool // a coding other than chunked
	close     bool // Connection: close
	keepAlive bool // Connection: keep-alive
	upgrade   bool // Connection: upgrade
}

// contentLength reads a Content-Length field. RFC 9110 §8.6 lets a
// recipient accept several fields, or a list, of one decimal value;
// anything else is invalid and, since a gateway that picked one of them
// could disagree with the origin about where the body ends (RFC 9112
// §11.2), rejected.
func (f *framing) contentLength(v []byte) error {
	for i := 0; i <= len(v); {
		var e []byte
		e, i = NextElement(v, i)
		n, ok := ParseDecimal(e)
		if !ok {
			return errContentLength
		}
		if f.clSeen && n != f.cl {
			return errContentLengths
		}
		f.cl, f.clSeen = n, true
	}
	return nil
}

// ParseDecimal parses 1*DIGIT, the grammar of Content-Length (RFC 9110
// §8.6) and of a status code, into a non-negative int64. Unlike
// strconv.ParseInt it takes no sign, and it converts nothing to a string.
func ParseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// transferEncoding reads a Transfer-Encoding field: a list of codings, in
// the order applied, across all such fields (RFC 9112 §6.1). Only chunked
// is decoded here; the verdict waits for [framing.resolve], when all
// fields are known. Empty list elements are rejected rather than skipped:
// RFC 9110 §5.6.1 asks recipients to tolerate them, but on this header a
// lenient reading is what request smuggling feeds on, and net/http and
// nginx reject them too.
func (f *framing) transferEncoding(v []byte) error {
	f.te = true
	for i := 0; i <= len(v); {
		var e []byte
		e, i = NextElement(v, i)
		n := 0
		for n < len(e) && class[e[n]]&clToken != 0 {
			n++
		}
		if n == 0 {
			return errTEList
		}
		if equalFold(e[:n], "chunked") {
			// chunked has no parameters (RFC 9112 §7.1).
			if n != len(e) {
				return errTEList
			}
			f.chunked++
			f.lastChunk = true
			continue
		}
		// Some other coding, perhaps with parameters; nothing here
		// decodes it, so its syntax matters no further.
		f.other, f.lastChunk = true, false
	}
	return nil
}

// connection reads the connection options of a Connection field (RFC 9110
// §7.6.1), ignoring empty elements and options it does not act on.
func (f *framing) connection(v []byte) {
	for i := 0; i <= len(v); {
		var e []byte
		e, i = NextElement(v, i)
		switch {
		case equalFold(e, "close"):
			f.close = true
		case equalFold(e, "keep-alive"):
			f.keepAlive = true
		case equalFold(e, "upgrade"):
			f.upgrade = true
		}
	}
}

// resolve decides the body framing once all fields are read: the content
// length (-1 without one) and whether the body is chunked.
func (f *framing) resolve(minor int, request bool) (cl int64, chunked bool, err error) {
	if !f.te {
		if f.clSeen {
			return f.cl, false, nil
		}
		return -1, false, nil
	}
	switch {
	case minor == 0:
		// RFC 9112 §6.1: a message in HTTP/1.0 with Transfer-Encoding
		// MUST be treated as having faulty framing.
		return 0, false, errTEHTTP10
	case f.clSeen:
		// RFC 9112 §6.1: Transfer-Encoding overrides Content-Length,
		// but such a message "ought to be handled as an error"; a
		// server MAY reject it, and a gateway must, since the hop
		// before it may have framed it by the length.
		return 0, false, errTEWithCL
	case f.chunked > 1:
		// RFC 9112 §6.1: "A sender MUST NOT apply the chunked
		// transfer coding more than once to a message body".
		return 0, false, errTEChunkedTwice
	case request && !f.lastChunk:
		// RFC 9112 §6.3: the request body length cannot be determined;
		// "the server MUST respond with the 400 (Bad Request) status code
		// and then close the connection."
		return 0, false, errTENotChunked
	case f.other:
		// RFC 9112 §6.1: "A server that receives a request message
		// with a transfer coding it does not understand SHOULD respond
		// with 501 (Not Implemented)." A response in a coding this
		// package cannot undo, read until close, is no more use to a
		// gateway.
		return 0, false, errTEUnsupported
	}
	return -1, true, nil
}

// persistent applies RFC 9112 §9.3: HTTP/1.1 persists unless "close", and
// HTTP/1.0 only with "keep-alive" and no "close".
func (f *framing) persistent(minor int) bool {
	if f.close {
		return false
	}
	return minor >= 1 || f.keepAlive
}

// KeepAliveTimeout returns the timeout parameter of a response's
// Keep-Alive field ("timeout=5, max=1000"; RFC 2068 §19.7.1.1, which
// servers such as Node's still send): how many seconds the server keeps
// an idle connection open. ok is false when there is no such field, no
// timeout in it, or the value is not a whole number of seconds.
func KeepAliveTimeout(hs []Header) (seconds int64, ok bool) {
	v, found := Lookup(hs, "keep-alive")
	if !found {
		return 0, false
	}
	for i := 0; i <= len(v); {
		var param []byte
		param, i = NextElement(v, i)
		name, value, eq := bytes.Cut(param, []byte("="))
		if !eq || !equalFold(trimOWS(name), "timeout") {
			continue
		}
		value = bytes.Trim(trimOWS(value), `"`)
		if n, ok := ParseDecimal(value); ok && n < maxKeepAliveTimeout {
			return n, true
		}
		return 0, false
	}
	return 0, false
}

// maxKeepAliveTimeout bounds a Keep-Alive timeout taken as given: past
// it (some 30 years) the value is nonsense, and in time.Duration it would
// overflow.
const maxKeepAliveTimeout = 1e9
