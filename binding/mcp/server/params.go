package server

import (
	"encoding/binary"

	"github.com/sluicehq/sluice/binding/http/h1"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// Custom parameter headers (SEP-2243). A 2026-07-28 tools/call carries a
// Mcp-Param-<Name> header for each argument its tool declares with
// x-mcp-header; the server checks them against the body, by the
// declarations of the tool as this server last listed it (learned from
// the tools/list results it sends, in finish). A tool it has not listed
// with declarations is not checked.

const (
	// maxParamHeaders and maxParamBytes bound the Mcp-Param headers a
	// POST keeps; past them the call of a tool with declarations is
	// refused, one without is not concerned.
	maxParamHeaders = 64
	maxParamBytes   = 16 << 10
	paramPrefix     = "mcp-param-"
)

// paramHeaders are a POST's Mcp-Param headers, each framed in buf as a
// name length byte, the name after the prefix, a 16-bit value length
// and the value (its optional white space trimmed).
type paramHeaders struct {
	buf  []byte
	n    int
	over bool // some were not kept
}

func isParamHeader(name []byte) bool {
	return len(name) > len(paramPrefix) && h1.EqualFold(name[:len(paramPrefix)], paramPrefix)
}

// keep copies the Mcp-Param headers out of the request's headers.
func (ph *paramHeaders) keep(ext []byte, typeID int32) {
	it, ok := httpHeaders(ext, typeID)
	if !ok {
		return
	}
	for name, v, ok := it.next(); ok; name, v, ok = it.next() {
		if !isParamHeader(name) {
			continue
		}
		name = name[len(paramPrefix):]
		v = trimOWS(v)
		if ph.n == maxParamHeaders || len(name) > 255 || len(ph.buf)+3+len(name)+len(v) > maxParamBytes {
			ph.over = true
			continue
		}
		ph.buf = append(ph.buf, byte(len(name)))
		ph.buf = append(ph.buf, name...)
		ph.buf = binary.LittleEndian.AppendUint16(ph.buf, uint16(len(v)))
		ph.buf = append(ph.buf, v...)
		ph.n++
	}
}

func (ph *paramHeaders) reset() {
	ph.buf, ph.n, ph.over = ph.buf[:0], 0, false
}

// get returns the value of Mcp-Param-<name> (names compare without
// regard to case) and how many such headers came.
func (ph *paramHeaders) get(name string) (v []byte, count int) {
	for b := ph.buf; len(b) > 0; {
		n := int(b[0])
		k := b[1 : 1+n]
		l := int(binary.LittleEndian.Uint16(b[1+n:]))
		val := b[3+n : 3+n+l]
		b = b[3+n+l:]
		if h1.EqualFold(k, name) {
			if count == 0 {
				v = val
			}
			count++
		}
	}
	return v, count
}

// trimOWS trims the optional white space around a field value (RFC 9110
// §5.5).
func trimOWS(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// paramHeadersOK checks a 2026-07-28 tools/call's Mcp-Param headers
// against its arguments, for the tool's declarations, and answers 400
// -32020 when they disagree: a declared argument present (not null)
// whose header is missing, does not decode or differs, a header for an
// argument absent or null, or a declared header sent twice. The messages
// are go-sdk's. A body that streams cannot be checked and is refused as
// too large.
func (p *post) paramHeadersOK(tool, params []byte) bool {
	h := p.h
	decls := h.s.params.Lookup(tool)
	if len(decls) == 0 {
		return true
	}
	if p.state&streamBody != 0 {
		p.tooLarge()
		return false
	}
	msg := append(h.msg[:0], "Header mismatch: "...)
	if p.params.over {
		msg = append(msg, "too many Mcp-Param headers"...)
		p.transportErrorBytes(400, codeHeaderMismatch, msg, nil)
		return false
	}
	args := jsonrpc.Lookup(params, "arguments")
	for _, d := range decls {
		// The argument is read once, as the upstream reads it: a member
		// on its path given twice is refused.
		for v, i := args, 0; i < len(d.Path) && isObject(v); v, i = jsonrpc.Lookup(v, d.Path[i]), i+1 {
			if dup := dupMember(v, d.Path[i]); dup != "" {
				p.duplicate(codeInvalidParams, dup)
				return false
			}
		}
		v, count := p.params.get(d.Name)
		arg := mcp.ArgumentAt(args, d.Path)
		switch {
		case count > 1:
			msg = appendParamName(msg, d)
			msg = append(msg, " header appears more than once"...)
		case arg == nil || string(arg) == "null":
			if count == 0 {
				continue
			}
			msg = append(msg, "unexpected "...)
			msg = appendParamName(msg, d)
			msg = append(msg, " header for absent or null parameter "...)
			msg = appendParamPath(msg, d)
		case count == 0:
			msg = append(msg, "missing "...)
			msg = appendParamName(msg, d)
			msg = append(msg, " header for parameter "...)
			msg = appendParamPath(msg, d)
		default:
			dec, ok := mcp.DecodeParamValue(h.aux[:0], v)
			if ok {
				h.aux = dec[:0]
			}
			match, primitive := mcp.ParamMatches(dec, arg)
			switch {
			case !ok:
				msg = appendParamName(msg, d)
				msg = append(msg, " header contains invalid Base64 encoding"...)
			case !primitive:
				msg = appendParamName(msg, d)
				msg = append(msg, " header present but body parameter "...)
				msg = appendParamPath(msg, d)
				msg = append(msg, " is not a primitive type"...)
			case !match:
				msg = appendParamName(msg, d)
				msg = append(msg, " header value '"...)
				msg = append(msg, v...)
				msg = append(msg, "' does not match body value"...)
			default:
				continue
			}
		}
		p.transportErrorBytes(400, codeHeaderMismatch, msg, nil)
		return false
	}
	return true
}

func appendParamName(b []byte, d mcp.ParamHeader) []byte {
	return append(append(b, mcp.ParamHeaderPrefix...), d.Name...)
}

// appendParamPath appends the argument's path, dotted and quoted.
func appendParamPath(b []byte, d mcp.ParamHeader) []byte {
	b = append(b, '"')
	for i, k := range d.Path {
		if i > 0 {
			b = append(b, '.')
		}
		b = append(b, k...)
	}
	return append(b, '"')
}
