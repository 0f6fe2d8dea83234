package proxy

import (
	"bytes"
	"math"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// uriScanner finds, in a tools/call, prompts/get or resources/read
// result streamed in pieces, where each resource uri a client may read
// back begins: the "uri" string of a content block (a resource_link) and
// of an embedded resource, in a tool's result.content[] and a prompt's
// result.messages[].content, and of each of a read's result.contents[].
// The proxy puts the route's prefix there, so that a resources/read of
// the uri comes back to the route that made it, as a listed resource's
// does. Anything else (structuredContent, _meta, text that looks like a
// uri) is left as it is.
//
// It reads JSON a byte at a time and keeps no more than a role per open
// container, so a result of any size costs the same few dozen bytes. A
// key is read with its escapes decoded ("ur\u0069" is uri), so that the
// proxy reads a member as a client's JSON parser does. Bytes that are not
// JSON leave it in some state and never fail it: the result goes on as the
// route sent it, bar the prefixes.
type uriScanner struct {
	result uint8 // the request kind whose result it reads
	lex    uint8
	key    keyID // the member whose value comes next
	value  bool  // the next string is a value, not a key
	inKey  bool  // the string being read is a key
	hex    uint8 // \u digits still to read
	cp     rune
	keyLen uint8
	keyBuf [8]byte
	depth  int
	// roles holds the role of each open container up to maxRoleDepth;
	// deeper ones have none.
	roles [maxRoleDepth]role
}

const maxRoleDepth = 8

type role uint8

const (
	roleNone     role = iota
	roleResult        // the result object
	roleContent       // result.content, or a message's content array
	roleMessages      // result.messages
	roleMessage       // one of result.messages
	roleBlock         // a content block: its uri is a resource link's
	roleEmbedded      // a block's resource: an embedded resource
	roleContents      // a read's result.contents
	roleRead          // one of result.contents: a resource's contents
	isObject     role = 0x80
)

type keyID uint8

const (
	keyOther keyID = iota
	keyContent
	keyMessages
	keyContents
	keyResource
	keyURI
)

const (
	lexValue  uint8 = iota // outside strings
	lexString              // in a string
	lexEscape              // after a backslash
	lexHex                 // in \uXXXX
)

// reset readies the scanner for the result of a request of kind (an
// McpBeginExKind).
func (s *uriScanner) reset(kind uint8) { *s = uriScanner{result: kind} }

// scan reads p, the next bytes of the result, and appends to at the
// offset in p where each uri's text begins (just past its opening quote).
// Within a value's string it looks only for the quote or backslash that
// ends the run of plain bytes, so a long text or blob costs two
// IndexByte passes rather than a step per byte.
func (s *uriScanner) scan(p []byte, at []int) []int {
	quote := -1 // the next '"' at or after i, len(p) if none
	for i := 0; i < len(p); i++ {
		if s.lex == lexString && !s.inKey {
			if quote < i {
				quote = len(p)
				if j := bytes.IndexByte(p[i:], '"'); j >= 0 {
					quote = i + j
				}
			}
			if k := bytes.IndexByte(p[i:quote], '\\'); k >= 0 {
				i += k
			} else {
				i = quote
			}
			if i == len(p) {
				break
			}
		}
		c := p[i]
		switch s.lex {
		case lexString:
			switch c {
			case '\\':
				s.lex = lexEscape
			case '"':
				s.lex = lexValue
				if s.inKey {
					s.key = s.keyID()
				}
			default:
				s.keyByte(c)
			}
		case lexEscape:
			s.lex = lexString
			switch c {
			case 'u':
				s.lex, s.hex, s.cp = lexHex, 4, 0
			case 'b':
				s.keyByte('\b')
			case 'f':
				s.keyByte('\f')
			case 'n':
				s.keyByte('\n')
			case 'r':
				s.keyByte('\r')
			case 't':
				s.keyByte('\t')
			default:
				s.keyByte(c)
			}
		case lexHex:
			s.cp = s.cp<<4 | rune(hexValue(c))
			if s.hex--; s.hex == 0 {
				s.lex = lexString
				if s.cp < 0x80 {
					s.keyByte(byte(s.cp))
				} else {
					s.keyByte(0xff) // no key the scanner looks for
				}
			}
		default:
			at = s.structural(c, i, at)
		}
	}
	return at
}

// structural reads c, a byte outside strings, at offset i of the piece.
func (s *uriScanner) structural(c byte, i int, at []int) []int {
	switch c {
	case '{', '[':
		r := s.childRole(c == '{')
		s.depth++
		if s.depth <= maxRoleDepth {
			s.roles[s.depth-1] = r
		}
		s.key, s.value = keyOther, c == '['
	case '}', ']':
		if s.depth > 0 {
			s.depth--
		}
		s.key = keyOther
	case ',':
		s.key, s.value = keyOther, !s.inObject()
	case ':':
		s.value = true
	case '"':
		s.lex, s.keyLen = lexString, 0
		s.inKey = s.inObject() && !s.value
		if !s.inKey {
			if top := s.top(); s.key == keyURI && (top == roleBlock|isObject || top == roleEmbedded|isObject || top == roleRead|isObject) {
				at = append(at, i+1)
			}
			s.key = keyOther
		}
	}
	return at
}

// childRole is the role of a container opening as the current value.
func (s *uriScanner) childRole(object bool) role {
	var r role
	switch parent := s.top(); {
	case s.depth == 0:
		if object {
			r = roleResult
		}
	case parent == roleResult|isObject && !object:
		switch {
		case s.key == keyContent && s.result == mcp.McpBeginExKindToolsCall:
			r = roleContent
		case s.key == keyMessages && s.result == mcp.McpBeginExKindPromptsGet:
			r = roleMessages
		case s.key == keyContents && s.result == mcp.McpBeginExKindResourcesRead:
			r = roleContents
		}
	case parent == roleContents && object:
		r = roleRead
	case parent == roleContent && object:
		r = roleBlock
	case parent == roleMessages && object:
		r = roleMessage
	case parent == roleMessage|isObject && s.key == keyContent:
		if object {
			r = roleBlock
		} else {
			r = roleContent
		}
	case parent == roleBlock|isObject && s.key == keyResource && object:
		r = roleEmbedded
	}
	if object {
		r |= isObject
	}
	return r
}

// top is the role of the innermost open container: roleNone outside any,
// and none to speak of deeper than the scanner keeps roles for.
func (s *uriScanner) top() role {
	if s.depth == 0 || s.depth > maxRoleDepth {
		return roleNone
	}
	return s.roles[s.depth-1]
}

// inObject reports whether the innermost open container is an object;
// deeper than the scanner keeps roles, it reads all as arrays, whose
// members no key names.
func (s *uriScanner) inObject() bool { return s.top()&isObject != 0 }

func (s *uriScanner) keyByte(c byte) {
	if !s.inKey {
		return
	}
	if int(s.keyLen) < len(s.keyBuf) {
		s.keyBuf[s.keyLen] = c
	}
	if s.keyLen < 255 {
		s.keyLen++
	}
}

// keyID names the key just read, with the colon still to come.
func (s *uriScanner) keyID() keyID {
	if int(s.keyLen) > len(s.keyBuf) {
		return keyOther
	}
	switch string(s.keyBuf[:s.keyLen]) {
	case "content":
		return keyContent
	case "messages":
		return keyMessages
	case "contents":
		return keyContents
	case "resource":
		return keyResource
	case "uri":
		return keyURI
	}
	return keyOther
}

func hexValue(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 0
}

// rewriteData relays a DATA of a rewritten reply: as it came when it
// holds no uri and nothing waits before it, else its bytes, prefixes put
// in, join held and go as the downstream's credit allows.
func (l *leg) rewriteData(d *frame.Data) {
	r := l.r
	p := d.Payload()
	r.at = r.uris.scan(p, r.at[:0])
	if len(r.at) == 0 && len(r.held) == 0 && int64(d.Reserved()) <= r.Out.Available() {
		if relayData(&r.Stream, d) != nil {
			r.fail()
			return
		}
		r.dataOut = true
		return
	}
	prefix := r.h.s.routes[l.route].uri
	last := 0
	for _, at := range r.at {
		r.held = append(append(r.held, p[last:at]...), prefix...)
		last = at
	}
	r.held = append(r.held, p[last:]...)
	if len(r.held) > maxList {
		// The route sends past the credit it was offered, or its prefixes
		// outgrow any window: the reply cannot go on whole.
		l.resetReply()
		l.abortInitial()
		r.abortReply()
		return
	}
	r.sendHeld()
}

// sendHeld sends what the downstream's credit allows of the reply bytes
// held, each DATA a whole message as the kinds send theirs, and then the
// route's END if it waits behind them.
func (r *request) sendHeld() {
	sent := 0
	for sent < len(r.held) && !r.Out.Closed() {
		n := int(min(int64(len(r.held)-sent), r.Out.Available()-int64(r.Out.Pad), int64(r.h.maxPayload)))
		if n <= 0 {
			break
		}
		if r.Data(frame.FlagsDataMessage, r.held[sent:sent+n], nil) != nil {
			r.fail()
			return
		}
		sent += n
		r.dataOut = true
	}
	r.held = r.held[:copy(r.held, r.held[sent:])]
	if len(r.held) > 0 || r.state&endHeld == 0 || r.Out.Closed() {
		return
	}
	r.state &^= endHeld
	if passOn(&r.Out, r.endTrace, r.endAuth, func() error { return r.End(r.endExt) }) != nil {
		r.fail()
	}
}

// offerRewritten offers the route the downstream's credit less what the
// proxy holds for it, never taking back credit it offered before, with
// the downstream's padding and budget. It keeps nothing back for the
// prefixes to come: a downstream that offers room for a whole message
// (the mcp server kind holding a reply to learn its length) offers more
// only once that room is used, so the route must be able to fill it.
func (l *leg) offerRewritten(src *engine.Stream, w *frame.Window) error {
	room := src.Out.Available() - int64(len(l.r.held))
	room = min(max(room, 0), math.MaxInt32)
	l.In.Max = l.In.Keep(l.In.Seq, int32(room))
	l.In.Ack = l.In.Seq
	l.In.Pad, l.In.Budget = src.Out.Pad, src.Out.Budget
	l.In.Min, l.In.Cap = src.Out.Min, src.Out.Cap
	return passOn(&l.In, w.TraceID(), w.Authorization(), l.Window)
}
