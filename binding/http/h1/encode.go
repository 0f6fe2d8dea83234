package h1

import "strconv"

// The encoders append to dst and return the extended slice, like
// strconv.AppendInt; they never allocate when dst has room. They never
// emit bytes that would let a caller's data end a line early or split a
// message (RFC 9112 §11.1–11.2): what cannot be sent as it is gets
// escaped, replaced or dropped, as each one documents.

const hexDigits = "0123456789abcdef"

// AppendStatusLine appends "HTTP/1.<minor> <status> <reason>\r\n" with the
// reason phrase of [StatusText], empty for an unknown code. minor is 0 or
// 1; any other value is written as 1. status should be 100 to 599; it is
// written in decimal whatever it is.
func AppendStatusLine(dst []byte, minor, status int) []byte {
	if minor == 0 {
		dst = append(dst, "HTTP/1.0 "...)
	} else {
		dst = append(dst, "HTTP/1.1 "...)
	}
	if 100 <= status && status <= 999 {
		dst = append(dst, byte('0'+status/100), byte('0'+status/10%10), byte('0'+status%10))
	} else {
		dst = strconv.AppendInt(dst, int64(status), 10)
	}
	dst = append(dst, ' ')
	dst = append(dst, StatusText(status)...)
	return append(dst, '\r', '\n')
}

// AppendRequestLine appends "<method> <target> HTTP/1.1\r\n". Bytes that
// cannot appear in a request line unescaped, in method (any byte that is
// not tchar) or in target (CTLs and SP), are percent-encoded, so a target
// taken from untrusted input cannot split the request; a valid method or
// target is written as it is.
func AppendRequestLine(dst []byte, method, target []byte) []byte {
	for _, c := range method {
		if class[c]&clToken != 0 {
			dst = append(dst, c)
		} else {
			dst = append(dst, '%', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	dst = append(dst, ' ')
	for _, c := range target {
		if class[c]&clTarget != 0 {
			dst = append(dst, c)
		} else {
			dst = append(dst, '%', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	return append(dst, " HTTP/1.1\r\n"...)
}

// AppendHeader appends "<name>: <value>\r\n". A name that is not a valid
// field name ([ValidHeaderName]) appends nothing, as net/http skips such
// names. Control bytes in value other than HTAB (CR, LF and NUL among
// them) are written as SP, as net/http does, so a value cannot start a
// new field line.
func AppendHeader(dst []byte, name, value []byte) []byte {
	if !isToken(name) {
		return dst
	}
	return appendFieldValue(append(dst, name...), value)
}

// AppendHeaderTitle is [AppendHeader] with the name written in title
// case, its first letter and each letter after a hyphen upper case and
// the rest lower case ("content-length" as "Content-Length"): the casing
// Zilla's http binding writes names in, which its scripts read byte for
// byte. Field names are case-insensitive (RFC 9110 §5.1), so only the
// bytes change.
func AppendHeaderTitle(dst []byte, name, value []byte) []byte {
	if !isToken(name) {
		return dst
	}
	return appendFieldValue(AppendTitle(dst, name), value)
}

// appendFieldValue appends ": <value>\r\n", the rest of a field line
// after its name, with the control bytes of value other than HTAB written
// as SP.
func appendFieldValue(dst []byte, value []byte) []byte {
	dst = append(dst, ':', ' ')
	if ValidHeaderValue(value) {
		dst = append(dst, value...)
	} else {
		for _, c := range value {
			if class[c]&clValue == 0 {
				c = ' '
			}
			dst = append(dst, c)
		}
	}
	return append(dst, '\r', '\n')
}

// AppendTitle appends b in title case, as [AppendHeaderTitle] writes a
// name: a letter at the start or after a hyphen upper case, any other
// letter lower case, other bytes as they are.
func AppendTitle(dst []byte, b []byte) []byte {
	upper := true
	for _, c := range b {
		switch {
		case upper && 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		case !upper && 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		dst = append(dst, c)
		upper = c == '-'
	}
	return dst
}

// AppendHeaderString is [AppendHeader] for string arguments.
func AppendHeaderString(dst []byte, name, value string) []byte {
	for i := 0; i < len(name); i++ {
		if class[name[i]]&clToken == 0 {
			return dst
		}
	}
	if len(name) == 0 {
		return dst
	}
	dst = append(dst, name...)
	dst = append(dst, ':', ' ')
	for i := 0; i < len(value); i++ {
		c := value[i]
		if class[c]&clValue == 0 {
			c = ' '
		}
		dst = append(dst, c)
	}
	return append(dst, '\r', '\n')
}

// AppendContentLength appends "Content-Length: <n>\r\n". A negative n
// appends nothing.
func AppendContentLength(dst []byte, n int64) []byte {
	if n < 0 {
		return dst
	}
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, '\r', '\n')
}

// AppendHeadEnd appends the empty line that ends a head, "\r\n".
func AppendHeadEnd(dst []byte) []byte { return append(dst, '\r', '\n') }

// AppendChunkHeader appends the chunk-size line for n bytes of data, "%x\r\n".
// Follow it with the data and [AppendChunkEnd]. An n of zero or less
// appends nothing: a zero-size chunk is the last chunk and would end the
// body; use [AppendLastChunk] for that.
func AppendChunkHeader(dst []byte, n int) []byte {
	if n <= 0 {
		return dst
	}
	shift := 0
	for v := n >> 4; v > 0; v >>= 4 {
		shift += 4
	}
	for ; shift >= 0; shift -= 4 {
		dst = append(dst, hexDigits[n>>shift&15])
	}
	return append(dst, '\r', '\n')
}

// AppendChunkEnd appends the CRLF that follows chunk-data.
func AppendChunkEnd(dst []byte) []byte { return append(dst, '\r', '\n') }

// AppendLastChunk appends the last chunk and an empty trailer section,
// "0\r\n\r\n", which ends a chunked body.
func AppendLastChunk(dst []byte) []byte { return append(dst, "0\r\n\r\n"...) }

// AppendLastChunkTrailers appends the last chunk, the trailer fields (as
// [AppendHeader] writes them) and the CRLF that ends the body. With no
// trailers it is [AppendLastChunk].
func AppendLastChunkTrailers(dst []byte, trailers []Header) []byte {
	dst = append(dst, '0', '\r', '\n')
	for i := range trailers {
		dst = AppendHeader(dst, trailers[i].Name, trailers[i].Value)
	}
	return append(dst, '\r', '\n')
}

// AppendErrorResponse appends a complete HTTP/1.1 response for a request
// the server refuses, such as one that failed to parse (see [Error]):
// status line, Content-Type: text/plain, Content-Length, Connection: close
// and the body "<status> <status text>[: <reason>]\n". The server closes
// the connection after writing it. reason is body text, so it cannot
// corrupt the framing; it is usually [Error.Reason].
func AppendErrorResponse(dst []byte, status int, reason string) []byte {
	text := StatusText(status)
	var digits [20]byte
	n := len(strconv.AppendInt(digits[:0], int64(status), 10)) + 1 // and the final LF
	if text != "" {
		n += 1 + len(text)
	}
	if reason != "" {
		n += 2 + len(reason)
	}
	dst = AppendStatusLine(dst, 1, status)
	dst = append(dst, "Content-Type: text/plain; charset=utf-8\r\n"...)
	dst = AppendContentLength(dst, int64(n))
	dst = append(dst, "Connection: close\r\n\r\n"...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	if text != "" {
		dst = append(dst, ' ')
		dst = append(dst, text...)
	}
	if reason != "" {
		dst = append(dst, ':', ' ')
		dst = append(dst, reason...)
	}
	return append(dst, '\n')
}
