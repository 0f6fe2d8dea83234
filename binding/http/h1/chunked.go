package h1

// Bounds on chunked framing, beyond the trailer bounds of [Limits].
const (
	// maxChunkSize bounds a chunk-size: far beyond any real body, and
	// small enough that no sum of sizes and counts can overflow int64.
	maxChunkSize = 1 << 62
	// maxChunkDigits bounds the hex digits of a chunk-size, leading zeros
	// included, as net/http does.
	maxChunkDigits = 16
	// maxChunkLine bounds a chunk-size line before its CRLF: the size and
	// any extensions. net/http allows 4094 bytes; extensions carry nothing
	// this package uses, so 1 KiB is plenty.
	maxChunkLine = 1 << 10
	// maxChunkExcess bounds framing overhead not paid for by data. Each
	// chunk may spend 16 bytes plus twice its size on framing (so one-byte
	// chunks still stream); beyond that, overhead accumulates and more
	// than 16 KiB of it is an error. This is net/http's rule, against a
	// peer that sends extension bytes instead of data.
	maxChunkExcess = 16 << 10
)

type chunkState uint8

const (
	stSize       chunkState = iota // first hex digit of chunk-size
	stSizeDigits                   // more hex digits
	stLineWS                       // after the size or an extension: OWS, ';' or CR
	stExtName0                     // after ';': BWS, then an extension name
	stExtName                      // in the name
	stExtNameWS                    // BWS after the name: '=', ';' or CR
	stExtVal0                      // after '=': BWS, then a token or quoted-string
	stExtVal                       // in a token value
	stExtQuoted                    // in a quoted-string value
	stExtEscape                    // after a backslash in a quoted-string
	stSizeLF                       // CR seen, LF must follow
	stData                         // chunk-data; size is what is left
	stDataCR                       // CRLF after chunk-data
	stDataLF
	stTrailerStart // start of a trailer field line, or of the final CRLF
	stTrailerName
	stTrailerValue
	stTrailerLF
	stTrailerEndLF // LF of the final CRLF
	stDone
	stBad // not a state: extNext's mark for a byte not allowed
)

// The kinds of byte on a chunk-size line past its digits, extNext's
// columns.
const (
	ckOther = iota
	ckToken
	ckOWS
	ckEquals
	ckSemicolon
	ckQuote
	ckKinds
)

// extNext is the grammar of a chunk-size line past its digits, outside a
// quoted-string: the state each kind of byte leads to from each state, in
// the columns other, token, OWS, "=", ";" and DQUOTE.
var extNext = [...][ckKinds]chunkState{
	stLineWS:    {stBad, stBad, stLineWS, stBad, stExtName0, stBad},
	stExtName0:  {stBad, stExtName, stExtName0, stBad, stBad, stBad},
	stExtName:   {stBad, stExtName, stExtNameWS, stExtVal0, stExtName0, stBad},
	stExtNameWS: {stBad, stBad, stExtNameWS, stExtVal0, stExtName0, stBad},
	stExtVal0:   {stBad, stExtVal, stExtVal0, stBad, stBad, stExtQuoted},
	stExtVal:    {stBad, stExtVal, stLineWS, stBad, stExtName0, stBad},
}

// extKind returns the column of c in extNext.
func extKind(c byte) int {
	switch {
	case class[c]&clToken != 0:
		return ckToken
	case isOWS(c):
		return ckOWS
	case c == '=':
		return ckEquals
	case c == ';':
		return ckSemicolon
	case c == '"':
		return ckQuote
	}
	return ckOther
}

// ChunkedDecoder decodes the chunked transfer coding (RFC 9112 §7.1)
// incrementally: each call to [ChunkedDecoder.Decode] takes whatever bytes
// have arrived, however the stream was split, and keeps the partial state
// of a chunk-size line, extension or trailer field between calls. The zero
// value is ready to use; [ChunkedDecoder.Reset] readies it for the next
// body. It never allocates.
//
// The framing is read strictly, since a gateway that reads it differently
// from the origin is open to request smuggling (RFC 9112 §11.2): every
// line ends in CRLF (a bare LF is an error here, unlike in a head: RFC 9112
// erratum 7633, and net/http since Go 1.24.2); chunk-size is at most 16
// hex digits and at most 2^62; extensions must follow the grammar of
// §7.1.1, with BWS around ';' and '=' and quoted-string values, and are
// skipped; the data must be followed by CRLF.
//
// Trailer fields (§7.1.2) are validated as header fields are (token name,
// no whitespace before the colon, field-value bytes, no obs-fold) and
// bounded by Limits, then dropped: RFC 9110 §6.5.1 lets a recipient that
// removes the chunked coding discard them, and streaming them out would
// mean holding back partial lines, which a caller reading under flow
// control cannot always wait for.
type ChunkedDecoder struct {
	// Limits bounds the trailer section: MaxHeaderBytes its bytes (final
	// CRLF included), MaxHeaders its fields; a zero field takes its
	// default. MaxTarget is unused.
	Limits Limits

	state        chunkState
	err          error // sticky: Decode fails the same way until Reset
	size         int64 // chunk-size as read, then the chunk-data left
	digits       int
	line         int   // bytes of the chunk-size line so far, CRLF excluded
	excess       int64 // framing overhead not paid for by data
	trailerBytes int
	trailers     int
}

// Reset readies d for a new body, keeping its Limits.
func (d *ChunkedDecoder) Reset() { *d = ChunkedDecoder{Limits: d.Limits} }

// Decode consumes a prefix of src. data is a view into src of body bytes
// (empty when src[:consumed] held only framing), consumed counts the bytes
// of src used, framing included, and done is set once the last chunk and
// trailer section have been consumed; src[consumed:] then belongs to
// whatever follows the body, such as the next pipelined request. Call it
// again with the rest of src (and the bytes that arrive after it) until
// done; a call with non-empty src always consumes at least one byte unless
// done. data is valid as long as src is unchanged.
//
// A malformed body returns an [*Error] with status 400, or 431 for a
// trailer section beyond Limits, and consumed is then the offset in src of
// the offending byte. The error is sticky: later calls return it, with
// consumed 0, until Reset.
func (d *ChunkedDecoder) Decode(src []byte) (data []byte, consumed int, done bool, err error) {
	if d.err != nil {
		return nil, 0, false, d.err
	}
	for i := 0; i < len(src); i++ {
		switch d.state {
		case stData:
			n := len(src) - i
			if int64(n) >= d.size {
				n = int(d.size)
				d.state = stDataCR
			}
			d.size -= int64(n)
			return src[i : i+n], i + n, false, nil
		case stDone:
			return nil, i, true, nil
		}
		if err := d.step(src[i]); err != nil {
			d.err = err
			return nil, i, false, err
		}
	}
	return nil, len(src), d.state == stDone, nil
}

// step advances the framing state machine by one byte.
func (d *ChunkedDecoder) step(c byte) error {
	switch d.state {
	case stSize:
		v := unhex(c)
		if v < 0 {
			return errChunkSize
		}
		d.size, d.digits, d.line = v, 1, 1
		d.state = stSizeDigits
		return nil
	case stSizeLF:
		if c != '\n' {
			return errLineEnd
		}
		return d.endSizeLine()
	case stDataCR:
		if c != '\r' {
			return errChunkData
		}
		d.state = stDataLF
		return nil
	case stDataLF:
		if c != '\n' {
			return errChunkData
		}
		d.state = stSize
		return nil
	case stTrailerStart, stTrailerName, stTrailerValue, stTrailerLF, stTrailerEndLF:
		return d.trailer(c)
	}

	// The rest of the chunk-size line:
	// chunk-size [ chunk-ext ] CRLF, with
	// chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] ).
	// Trailing OWS before CRLF is tolerated, as net/http does.
	switch c {
	case '\r':
		switch d.state {
		case stSizeDigits, stLineWS, stExtName, stExtNameWS, stExtVal:
			d.state = stSizeLF
			return nil
		}
		return errChunkExt
	case '\n':
		return errLineEnd
	}
	if d.line++; d.line > maxChunkLine {
		return errChunkLine
	}
	if d.state == stSizeDigits {
		if v := unhex(c); v >= 0 {
			if d.digits++; d.digits > maxChunkDigits || d.size > maxChunkSize>>4 {
				return errChunkTooLarge
			}
			if d.size = d.size<<4 | v; d.size > maxChunkSize {
				return errChunkTooLarge
			}
			return nil
		}
		d.state = stLineWS
	}
	switch d.state {
	case stLineWS, stExtName0, stExtName, stExtNameWS, stExtVal0, stExtVal:
		next := extNext[d.state][extKind(c)]
		if next == stBad {
			if d.state == stLineWS {
				return errChunkSize
			}
			return errChunkExt
		}
		d.state = next
	case stExtQuoted:
		switch {
		case c == '"':
			d.state = stLineWS
		case c == '\\':
			d.state = stExtEscape
		case class[c]&clQdtext == 0:
			return errChunkExt
		}
	case stExtEscape:
		// quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
		if class[c]&clValue == 0 {
			return errChunkExt
		}
		d.state = stExtQuoted
	default:
		panic("internal error: chunked decoder state")
	}
	return nil
}

// endSizeLine finishes a chunk-size line: it charges the line's overhead
// and starts the chunk-data, or the trailer section after the last chunk.
func (d *ChunkedDecoder) endSizeLine() error {
	// The line plus the CRLF after the data, less the 16 bytes and twice
	// the size each chunk is allowed (see maxChunkExcess). A size beyond
	// maxChunkExcess pays off any excess there can be, and doubling it
	// could overflow.
	d.excess += int64(d.line) + 2 - 16
	if d.size > maxChunkExcess {
		d.excess = 0
	} else if d.excess -= 2 * d.size; d.excess < 0 {
		d.excess = 0
	}
	if d.excess > maxChunkExcess {
		return errChunkOverhead
	}
	if d.size == 0 {
		d.state = stTrailerStart
	} else {
		d.state = stData
	}
	return nil
}

// trailer advances through the trailer section:
// *( field-line CRLF ) CRLF.
func (d *ChunkedDecoder) trailer(c byte) error {
	lim := d.Limits.withDefaults()
	if d.trailerBytes++; d.trailerBytes > lim.MaxHeaderBytes {
		return errTrailerTooLarge
	}
	if c == '\n' && (d.state == stTrailerStart || d.state == stTrailerValue) {
		// Every line ends in CRLF here (see [ChunkedDecoder]).
		return errLineEnd
	}
	switch d.state {
	case stTrailerStart:
		switch {
		case c == '\r':
			d.state = stTrailerEndLF
		case isOWS(c):
			return errObsFold
		case class[c]&clToken != 0:
			if d.trailers++; d.trailers > lim.MaxHeaders {
				return errTooManyTrailers
			}
			d.state = stTrailerName
		default:
			return errHeaderName
		}
	case stTrailerName:
		switch {
		case c == ':':
			d.state = stTrailerValue
		case class[c]&clToken == 0:
			return errHeaderName
		}
	case stTrailerValue:
		switch {
		case c == '\r':
			d.state = stTrailerLF
		case class[c]&clValue == 0:
			return errHeaderValue
		}
	case stTrailerLF:
		if c != '\n' {
			return errLineEnd
		}
		d.state = stTrailerStart
	case stTrailerEndLF:
		if c != '\n' {
			return errLineEnd
		}
		d.state = stDone
	}
	return nil
}
