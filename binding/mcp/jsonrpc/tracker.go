package jsonrpc

// MaxDepth is the deepest nesting of objects and arrays a [Tracker]
// accepts, and its default: encoding/json's limit. The top-level object of
// a message is at depth 1.
const MaxDepth = 10000

// Options tune a [Tracker]. The zero value validates exactly as
// encoding/json's Valid does.
type Options struct {
	// MaxDepth bounds the nesting of objects and arrays. Zero, and values
	// above the package's [MaxDepth], mean [MaxDepth].
	MaxDepth int
	// StrictUTF8 rejects strings that are not valid UTF-8 (RFC 8259 §8.1)
	// with [ErrInvalidUTF8], as utf8.Valid would: no overlong forms, no
	// surrogates, nothing above U+10FFFF. encoding/json accepts such
	// strings (and replaces the bad bytes with U+FFFD when it decodes
	// them), so by default the tracker does too.
	StrictUTF8 bool
	// RejectDuplicates rejects a message whose top-level object holds a
	// tracked member (jsonrpc, id, method, params, result, error) twice,
	// with [ErrDuplicate] at the second key. By default the last one wins,
	// as in encoding/json, and [Tracker.Duplicates] reports it: parsers
	// disagree on which of two "method" members counts (fastjson's Get
	// takes the first), so a gateway that forwards such a message lets its
	// upstream see a different request than the one it checked.
	RejectDuplicates bool
}

// Kind is the kind of a message's top-level value.
type Kind uint8

// The kinds of top-level value. A JSON-RPC message is an object, a batch
// is an array; anything else is valid JSON but not a JSON-RPC message.
const (
	KindNone   Kind = iota // nothing but whitespace seen yet
	KindObject             // a request, notification or response
	KindArray              // a batch (JSON-RPC 2.0 §6)
	KindString
	KindNumber
	KindBool
	KindNull
)

var kindNames = [...]string{"none", "object", "array", "string", "number", "bool", "null"}

// String returns the kind's name, for example "array".
func (k Kind) String() string { return nameOf(kindNames[:], int(k), "KIND_") }

// Member is one of the top-level members of a JSON-RPC message that the
// [Tracker] reports.
type Member uint8

// The tracked members, in the order of JSON-RPC 2.0 §4 and §5, then two
// of MCP 2026-07-28's: MemberResultType, a result's "resultType", which a
// Tracker run over a bare result finds in the same pass that validates
// it, so a gateway tells an input_required result from a complete one at
// no cost; and MemberRequestState, the "requestState" of an
// input_required result or of the params of its retry, which a gateway
// reads to follow a call's rounds when the object streams.
const (
	MemberJSONRPC Member = iota
	MemberID
	MemberMethod
	MemberParams
	MemberResult
	MemberError
	MemberResultType
	MemberRequestState
	numMembers
	memberNone = numMembers
)

var memberNames = [...]string{"jsonrpc", "id", "method", "params", "result", "error", "resultType", "requestState"}

// String returns the member's key, for example "params".
func (m Member) String() string { return nameOf(memberNames[:], int(m), "MEMBER_") }

// Members is a set of [Member]s.
type Members uint8

// Has reports whether m is in s.
func (s Members) Has(m Member) bool { return s&(1<<m) != 0 }

// lookupMember returns the member named by an object key, or memberNone.
func lookupMember(name []byte) Member {
	switch string(name) {
	case "jsonrpc":
		return MemberJSONRPC
	case "id":
		return MemberID
	case "method":
		return MemberMethod
	case "params":
		return MemberParams
	case "result":
		return MemberResult
	case "error":
		return MemberError
	case "resultType":
		return MemberResultType
	case "requestState":
		return MemberRequestState
	}
	return memberNone
}

// Key is a top-level key, other than a tracked [Member]'s, whose presence
// a [Tracker] notes without tracking its value: the members a 2026-07-28
// MCP result carries that a gateway strips for a 2025-era client, so that
// the pass that validates a result also tells whether it has any of them,
// and an input_required result's inputRequests, which a gateway must not
// pass on named twice.
type Key uint8

// The noted keys.
const (
	KeyTTLMs         Key = iota // "ttlMs"
	KeyCacheScope               // "cacheScope"
	KeyMeta                     // "_meta"
	KeyInputRequests            // "inputRequests"
	numKeys
)

var keyNames = [...]string{"ttlMs", "cacheScope", "_meta", "inputRequests"}

// String returns the key, for example "_meta".
func (k Key) String() string { return nameOf(keyNames[:], int(k), "KEY_") }

// Keys is a set of [Key]s.
type Keys uint8

// Has reports whether k is in s.
func (s Keys) Has(k Key) bool { return s&(1<<k) != 0 }

// lookupKey returns the set holding the noted key named name, or an
// empty set.
func lookupKey(name []byte) Keys {
	switch string(name) {
	case "ttlMs":
		return 1 << KeyTTLMs
	case "cacheScope":
		return 1 << KeyCacheScope
	case "_meta":
		return 1 << KeyMeta
	case "inputRequests":
		return 1 << KeyInputRequests
	}
	return 0
}

// nameOf returns names[i], the name of the value i of an enumeration, or
// for a value past them prefix and the number.
func nameOf(names []string, i int, prefix string) string {
	if uint(i) < uint(len(names)) {
		return names[i]
	}
	return prefix + itoa(i)
}

// Range is a value's place in a message: bytes [Start, End) from the
// message's first byte. A string's range includes its quotes, an object's
// its braces. End is zero until the value is complete (a complete value
// is never empty, so End > 0); Start is zero until the value starts (only
// the top-level value can start at 0).
type Range struct {
	Start, End int64
}

// Complete reports whether the value has ended.
func (r Range) Complete() bool { return r.End > 0 }

// Len returns End - Start, or 0 while the value is incomplete.
func (r Range) Len() int64 {
	if r.End == 0 {
		return 0
	}
	return r.End - r.Start
}

// Bytes returns the value's bytes from msg, the whole message or any
// buffer that starts at its first byte; nil if the value is incomplete or
// msg is too short. The result aliases msg.
func (r Range) Bytes(msg []byte) []byte {
	if r.End == 0 || r.End > int64(len(msg)) {
		return nil
	}
	return msg[r.Start:r.End:r.End]
}

// state is where the scanner stands between two bytes.
type state uint8

const (
	stValue        state = iota // whitespace, then a value
	stFirst                     // after '[' or '{': whitespace, then a value or ']', or a key or '}'
	stObjectKey                 // after ',' in an object: whitespace, then a key
	stColon                     // after a key: whitespace, then ':'
	stAfter                     // after a value: whitespace, then ',' or a closer
	stString                    // in a string's body
	stEscape                    // after '\' in a string
	stHex                       // in the four hex digits of a \u escape
	stUTF8                      // StrictUTF8: in a multi-byte sequence
	stNumNeg                    // after a leading '-'
	stNumZero                   // after a leading '0'
	stNumInt                    // in the integer's digits
	stNumDot                    // after '.'
	stNumFrac                   // in the fraction's digits
	stNumExp                    // after 'e' or 'E'
	stNumExpSign                // after the exponent's sign
	stNumExpDigits              // in the exponent's digits
	stLiteral                   // in true, false or null
	stDone                      // the value is complete
	stFailed                    // the message is rejected
)

// stackWords holds one bit per nesting level up to MaxDepth.
const stackWords = MaxDepth/64 + 1

// strKind says which of scan's string loops a string belongs to.
type strKind uint8

const (
	strValue strKind = iota // a value
	strKey                  // a key below the top level
	strTrack                // a top-level key, its name collected
)

// msg is the per-message part of a Tracker, cleared by Reset.
type msg struct {
	st    state
	str   strKind // stString etc.: the kind of string being scanned
	kind  Kind
	arr   bool  // the innermost open container is an array
	pend  bool  // the next value to start is member cur's
	cur   uint8 // 1 + the top-level member whose value is open, or 0
	done  Members
	dup   Members
	keys  Keys // the noted keys seen at the top level
	twice Keys // … and those seen more than once
	depth int
	off   int64 // bytes consumed by earlier Feeds
	val   Range
	rng   [numMembers]Range

	name  [13]byte // a top-level key's first bytes, decoded: the longest tracked or noted name
	nameN int      // its length so far; > len(name) once it cannot match
	keyAt int64    // offset of its opening quote

	lit  string // stLiteral: the literal and the next byte's index
	litI int
	hexN int  // stHex: digits read
	hexV rune // ... and their value
	need int  // stUTF8: continuation bytes still due
	lo   byte // ... the range the next one must fall in
	hi   byte
	seq  int64 // ... offset of the sequence's first byte

	err *SyntaxError
}

// A Tracker follows one JSON message through any number of chunks, byte
// by byte, without buffering it: it finds where the top-level value ends,
// validates it as encoding/json does, and reports the ranges of the
// top-level members a JSON-RPC gateway routes on. See the package
// documentation for the rules it keeps.
//
// The zero value is ready and uses the zero [Options]. A Tracker is not
// safe for concurrent use; keep one per connection or worker and [Reset]
// it between messages, which costs no allocation.
type Tracker struct {
	m        msg
	maxDepth int
	rejDup   bool
	// tab and hi tell scan which bytes end a run of plain string content:
	// strPlain and 0, or under StrictUTF8 strStrict and highs (tab for
	// top-level keys, hi for the string masks). A nil tab marks a zero
	// Tracker, configured by its first Feed.
	tab *[256]bool
	hi  uint64
	// stack holds, for each open container by depth, 1 for an array and
	// 0 for an object. Bits above the depth are stale, so Reset leaves
	// them.
	stack [stackWords]uint64
	// win holds the string masks of the chunk being scanned.
	win window
}

// NewTracker returns a Tracker using o.
func NewTracker(o Options) *Tracker {
	t := new(Tracker)
	t.SetOptions(o)
	return t
}

// SetOptions sets t's options and resets it.
func (t *Tracker) SetOptions(o Options) {
	t.configure(o)
	t.Reset()
}

func (t *Tracker) configure(o Options) {
	t.maxDepth = o.MaxDepth
	if t.maxDepth <= 0 || t.maxDepth > MaxDepth {
		t.maxDepth = MaxDepth
	}
	t.rejDup = o.RejectDuplicates
	t.tab, t.hi = &strPlain, 0
	if o.StrictUTF8 {
		t.tab, t.hi = &strStrict, highs
	}
}

// Reset readies t for a new message, keeping its options.
func (t *Tracker) Reset() {
	t.m = msg{}
}

// Feed consumes the next chunk p of the message. It returns the number of
// bytes of p consumed; done reports that the top-level value is complete.
// When the value ends inside p, n stops right after its last byte: any
// whitespace or next message that follows is left to the caller, as
// encoding/json's Decoder leaves it. A top-level number cannot end at the
// end of a chunk (more digits may follow): call [Tracker.Finish] when the
// message ends.
//
// On an error, n is where in p the scan stopped, and the error, a
// [*SyntaxError], is also returned by every later Feed and Finish until
// [Tracker.Reset]. After done, Feed consumes nothing and returns done.
func (t *Tracker) Feed(p []byte) (n int, done bool, err error) {
	switch t.m.st {
	case stDone:
		return 0, true, nil
	case stFailed:
		return 0, false, t.m.err
	}
	if t.tab == nil {
		t.configure(Options{})
	}
	t.win.n = 0 // the masks are p's
	n = t.scan(p)
	t.m.off += int64(n)
	switch t.m.st {
	case stDone:
		return n, true, nil
	case stFailed:
		return n, false, t.m.err
	}
	return n, false, nil
}

// Finish tells t that the message has ended. It returns nil if the
// top-level value is complete (completing a top-level number), and
// otherwise a [*SyntaxError] matching [ErrUnexpectedEOF] at the message's
// length, or the error Feed returned.
func (t *Tracker) Finish() error {
	switch t.m.st {
	case stDone:
		return nil
	case stFailed:
		return t.m.err
	case stNumZero, stNumInt, stNumFrac, stNumExpDigits:
		if t.m.depth == 0 {
			t.m.val.End = t.m.off
			t.m.st = stDone
			return nil
		}
	}
	return t.fail(t.m.off, codeEOF, 0)
}

// Done reports whether the top-level value is complete.
func (t *Tracker) Done() bool { return t.m.st == stDone }

// Err returns the error that stopped t, or nil.
func (t *Tracker) Err() error {
	if t.m.err == nil {
		return nil
	}
	return t.m.err
}

// Offset returns the number of bytes consumed so far.
func (t *Tracker) Offset() int64 { return t.m.off }

// Kind returns the kind of the top-level value, known from its first byte.
func (t *Tracker) Kind() Kind { return t.m.kind }

// Value returns the range of the top-level value.
func (t *Tracker) Value() Range { return t.m.val }

// Member returns the range of a top-level member's value, when the
// top-level value is an object. Start is set once the value has started
// and End once it has ended; a later duplicate of the member replaces the
// range (see [Options.RejectDuplicates]).
func (t *Tracker) Member(m Member) Range {
	if m >= numMembers {
		return Range{}
	}
	return t.m.rng[m]
}

// Members returns the set of top-level members whose values are complete.
func (t *Tracker) Members() Members { return t.m.done }

// ParamsDone reports whether the params value is complete, the point at
// which a client can end its upstream request.
func (t *Tracker) ParamsDone() bool { return t.m.done.Has(MemberParams) }

// Keys returns the set of noted keys the top-level object has had so far
// (a key counts from its closing quote on). Their values are not tracked,
// and a repeated one is no duplicate (RejectDuplicates leaves it alone):
// KeysTwice reports it.
func (t *Tracker) Keys() Keys { return t.m.keys }

// KeysTwice returns the set of noted keys the top-level object has had
// more than once so far.
func (t *Tracker) KeysTwice() Keys { return t.m.twice }

// Duplicates returns the set of members whose key appeared more than once
// in the top-level object.
func (t *Tracker) Duplicates() Members { return t.m.dup }

// fail records a rejection at offset off and returns it. It is kept out
// of scan so that scan's error exits stay small and cost its hot loops no
// registers.
//
//go:noinline
func (t *Tracker) fail(off int64, code errCode, c byte) error {
	t.m.err = &SyntaxError{Offset: off, code: code, c: c}
	t.m.st = stFailed
	return t.m.err
}

// failLiteral rejects byte c in the literal t.m.lit.
//
//go:noinline
func (t *Tracker) failLiteral(off int64, c byte) {
	t.fail(off, codeLiteral, c)
	t.m.err.lit, t.m.err.want = t.m.lit, t.m.lit[t.m.litI]
}

// Character classes. strPlain and strStrict hold the bytes that end a run
// of plain string content: '"', '\' and control characters, and in
// strStrict also every byte of a multi-byte UTF-8 sequence.
var strPlain, strStrict, digits [256]bool

func init() {
	for c := range 256 {
		strPlain[c] = c < 0x20 || c == '"' || c == '\\'
		strStrict[c] = strPlain[c] || c >= 0x80
		digits[c] = '0' <= c && c <= '9'
	}
}

// SWAR constants: a byte repeated across a word (see plainEnds).
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

func isSpace(c byte) bool {
	return c <= ' ' && (c == ' ' || c == '\t' || c == '\n' || c == '\r')
}

// addName appends a decoded byte to a top-level key's name.
func (m *msg) addName(c byte) {
	if m.nameN < len(m.name) {
		m.name[m.nameN] = c
	}
	m.nameN++
}

// endKey matches a top-level key against the tracked members; the next
// value starts that member.
func (t *Tracker) endKey() error {
	if t.m.nameN > len(t.m.name) {
		return nil
	}
	mb := lookupMember(t.m.name[:t.m.nameN])
	if mb == memberNone {
		k := lookupKey(t.m.name[:t.m.nameN])
		t.m.twice |= t.m.keys & k
		t.m.keys |= k
		return nil
	}
	bit := Members(1) << mb
	if t.m.rng[mb].Start != 0 {
		if t.rejDup {
			err := t.fail(t.m.keyAt, codeDuplicate, 0)
			t.m.err.lit = memberNames[mb]
			return err
		}
		t.m.dup |= bit
	}
	t.m.cur = uint8(mb) + 1
	t.m.pend = true
	t.m.done &^= bit
	t.m.rng[mb] = Range{}
	return nil
}

// begin notes the top-level value starting at off with byte c.
func (t *Tracker) begin(off int64, c byte) {
	t.m.val.Start = off
	switch c {
	case '{':
		t.m.kind = KindObject
	case '[':
		t.m.kind = KindArray
	case '"':
		t.m.kind = KindString
	case 't', 'f':
		t.m.kind = KindBool
	case 'n':
		t.m.kind = KindNull
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		t.m.kind = KindNumber
	}
}

// scan runs the state machine over p and returns the bytes consumed. It
// is one function of labelled blocks joined by goto, each block a state:
// a byte moves the scan from block to block without a call or a dispatch,
// and only a chunk's end (or the value's, or an error) saves the state in
// t.m. Its locals are few so that they stay in registers; the rest of the
// state is read from t.m where it is needed, off the hot paths. Every goto
// target is at the top level of the function and all its variables are
// declared before the first label, as the spec requires.
//
// Strings are scanned by three copies of one loop, for keys, for values
// and for top-level keys (whose names are collected, byte by byte), so
// that the hot loops test no flag; escapes, multi-byte sequences and a
// chunk's end leave them through strStop and return through strResume.
//
// Below the top level, where nothing is tracked but the nesting, a value's
// end hands the scan to lane, a small function that runs the common forms
// of JSON faster than this one can and returns here for everything else.
func (t *Tracker) scan(p []byte) int {
	var (
		i     int
		c     byte
		depth = t.m.depth
		arr   = t.m.arr
	)

	switch t.m.st {
	case stValue:
		goto value
	case stFirst:
		goto first
	case stObjectKey:
		goto objectKey
	case stColon:
		goto colon
	case stAfter:
		goto after
	case stString:
		goto strResume
	case stEscape:
		goto escape
	case stHex:
		goto hex
	case stUTF8:
		goto utf8
	case stNumNeg:
		goto numNeg
	case stNumZero:
		goto numZero
	case stNumInt:
		goto numInt
	case stNumDot:
		goto numDot
	case stNumFrac:
		goto numFrac
	case stNumExp:
		goto numExp
	case stNumExpSign:
		goto numExpSign
	case stNumExpDigits:
		goto numExpDigits
	case stLiteral:
		goto literal
	}
	panic("internal error: jsonrpc: scan in state " + itoa(int(t.m.st)))

value:
	if i = skipSpace(p, i); i == len(p) {
		return t.suspend(stValue, i, depth, arr)
	}
	c = p[i]
valueByte: // c = p[i] starts a value
	if depth > 1 {
		if c == '"' {
			i++
			goto valStr
		}
	} else {
		if depth == 0 {
			t.begin(t.m.off+int64(i), c)
		} else if t.m.pend {
			t.m.pend = false
			t.m.rng[t.m.cur-1].Start = t.m.off + int64(i)
		}
	}
	switch c {
	case '"':
		i++
		goto valStr
	case '{':
		if depth == t.maxDepth {
			t.fail(t.m.off+int64(i), codeDepth, c)
			return i
		}
		depth, arr = t.push(depth+1, false)
		// Compact JSON: the first key follows the brace at once.
		if depth > 1 && i < len(p)-1 && p[i+1] == '"' {
			i += 2
			goto keyStr
		}
		i++
		goto first
	case '[':
		if depth == t.maxDepth {
			t.fail(t.m.off+int64(i), codeDepth, c)
			return i
		}
		depth, arr = t.push(depth+1, true)
		// Compact JSON: a string element follows the bracket at once.
		if depth > 1 && i < len(p)-1 && p[i+1] == '"' {
			i += 2
			goto valStr
		}
		i++
		goto first
	case 't':
		if literalAt(p, i, "true") {
			i += 4
			goto end
		}
		t.m.lit = "true"
	case 'f':
		if literalAt(p, i, "false") {
			i += 5
			goto end
		}
		t.m.lit = "false"
	case 'n':
		if literalAt(p, i, "null") {
			i += 4
			goto end
		}
		t.m.lit = "null"
	case '-':
		i++
		goto numNeg
	case '0':
		i++
		goto numZero
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		i++
		goto numInt
	default:
		t.fail(t.m.off+int64(i), codeValue, c)
		return i
	}
	// A literal split across chunks, or a wrong one: byte by byte.
	t.m.litI = 1
	i++
literal:
	for t.m.litI < len(t.m.lit) {
		if i == len(p) {
			return t.suspend(stLiteral, i, depth, arr)
		}
		if c = p[i]; c != t.m.lit[t.m.litI] {
			t.failLiteral(t.m.off+int64(i), c)
			return i
		}
		t.m.litI++
		i++
	}
	goto end

first: // after '[' or '{': the container's closer, or its first element or key
	if i = skipSpace(p, i); i == len(p) {
		return t.suspend(stFirst, i, depth, arr)
	}
	c = p[i]
	if arr {
		if c == ']' {
			goto pop
		}
		goto valueByte
	}
	if c == '}' {
		goto pop
	}
	goto keyByte

objectKey:
	if i = skipSpace(p, i); i == len(p) {
		return t.suspend(stObjectKey, i, depth, arr)
	}
	c = p[i]
keyByte: // c = p[i] must open a key
	if c != '"' {
		t.fail(t.m.off+int64(i), codeKey, c)
		return i
	}
	i++
	if depth == 1 {
		t.m.nameN = 0
		t.m.keyAt = t.m.off + int64(i-1)
		goto trackStr
	}
	goto keyStr

colon:
	if i = skipSpace(p, i); i == len(p) {
		return t.suspend(stColon, i, depth, arr)
	}
	if c = p[i]; c != ':' {
		t.fail(t.m.off+int64(i), codeColon, c)
		return i
	}
	i++
	// Compact JSON: the value follows the colon at once.
	if i < len(p) && p[i] == '"' && depth > 1 {
		i++
		goto valStr
	}
	goto value

	// The string loops find a string's end, or the next byte they must
	// look at, in the string masks (see window.next). The strings below
	// the top level are mostly lane's; the compact-JSON shortcuts (`":"`,
	// `,"`, `{"`, `["`) skip the general states.
	//
	// i < len(p)-1 proves p[i+1] in bounds where i+2 <= len(p) does not.
valStr:
	if i = t.win.next(p, i, t.hi); uint(i) < uint(len(p)) && p[i] == '"' {
		i++
		goto end
	}
	t.m.str = strValue
	goto strStop

keyStr:
	if i = t.win.next(p, i, t.hi); uint(i) < uint(len(p)) && p[i] == '"' {
		i++
		goto keyEnd
	}
	t.m.str = strKey
	goto strStop
keyEnd:
	// Compact JSON: the colon and a string value follow the key at once.
	// Two byte loads, not one of p[i:i+2]: slicing needs p's capacity,
	// a stack reload here.
	if i < len(p)-1 && p[i] == ':' {
		if c = p[i+1]; c == '"' {
			i += 2
			goto valStr
		}
		i++
		if c > ' ' {
			goto valueByte
		}
		goto value
	}
	goto colon

trackStr: // a top-level key, byte by byte, its name collected
	for ; i < len(p); i++ {
		if c = p[i]; t.tab[c] {
			goto trackSpecial
		}
		t.m.addName(c)
	}
	t.m.str = strTrack
	goto strStop
trackSpecial:
	if c == '"' {
		i++
		if t.endKey() != nil {
			return i - 1
		}
		goto colon
	}
	t.m.str = strTrack
	if c >= 0x80 {
		t.m.nameN = len(t.m.name) + 1 // StrictUTF8: no tracked member has such a name
	}
	goto strSpecial

strResume: // continue the string t.m.str
	switch t.m.str {
	case strKey:
		goto keyStr
	case strTrack:
		goto trackStr
	}
	goto valStr

strStop: // the string t.m.str stopped at p[i] short of its closing quote
	if uint(i) >= uint(len(p)) {
		return t.suspend(stString, i, depth, arr)
	}
	c = p[i]
strSpecial: // p[i] = c is a string's '\', a control byte, or non-ASCII under StrictUTF8
	if c == '\\' {
		i++
		goto escape
	}
	if c < 0x20 {
		t.fail(t.m.off+int64(i), codeString, c)
		return i
	}
	// Check the sequence c starts (utf8.acceptRanges).
	t.m.seq = t.m.off + int64(i)
	t.m.lo, t.m.hi = 0x80, 0xBF
	switch {
	case 0xC2 <= c && c <= 0xDF:
		t.m.need = 1
	case c == 0xE0:
		t.m.need, t.m.lo = 2, 0xA0
	case c == 0xED:
		t.m.need, t.m.hi = 2, 0x9F
	case 0xE1 <= c && c <= 0xEF:
		t.m.need = 2
	case c == 0xF0:
		t.m.need, t.m.lo = 3, 0x90
	case c == 0xF4:
		t.m.need, t.m.hi = 3, 0x8F
	case 0xF1 <= c && c <= 0xF3:
		t.m.need = 3
	default:
		t.fail(t.m.seq, codeUTF8, c)
		return i
	}
	i++
utf8:
	for t.m.need > 0 {
		if i == len(p) {
			return t.suspend(stUTF8, i, depth, arr)
		}
		if c = p[i]; c < t.m.lo || c > t.m.hi {
			t.fail(t.m.seq, codeUTF8, c)
			return i
		}
		t.m.lo, t.m.hi = 0x80, 0xBF
		t.m.need--
		i++
	}
	goto strResume

escape:
	if i == len(p) {
		return t.suspend(stEscape, i, depth, arr)
	}
	switch c = p[i]; c {
	case '"', '\\', '/':
	case 'b':
		c = '\b'
	case 'f':
		c = '\f'
	case 'n':
		c = '\n'
	case 'r':
		c = '\r'
	case 't':
		c = '\t'
	case 'u':
		i++
		t.m.hexN, t.m.hexV = 0, 0
		goto hex
	default:
		t.fail(t.m.off+int64(i), codeEscape, c)
		return i
	}
	if t.m.str == strTrack {
		t.m.addName(c)
	}
	i++
	goto strResume

hex:
	for t.m.hexN < 4 {
		if i == len(p) {
			return t.suspend(stHex, i, depth, arr)
		}
		c = p[i]
		var h byte
		switch {
		case '0' <= c && c <= '9':
			h = c - '0'
		case 'a' <= c && c <= 'f':
			h = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			h = c - 'A' + 10
		default:
			t.fail(t.m.off+int64(i), codeHex, c)
			return i
		}
		t.m.hexV = t.m.hexV<<4 | rune(h)
		t.m.hexN++
		i++
	}
	if t.m.str == strTrack {
		if t.m.hexV < 0x80 {
			t.m.addName(byte(t.m.hexV))
		} else {
			t.m.nameN = len(t.m.name) + 1
		}
	}
	goto strResume

	// Numbers, RFC 8259 §6: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
	// A number ends at the first byte that cannot continue it, which
	// then belongs to whatever follows.
numNeg:
	if i == len(p) {
		return t.suspend(stNumNeg, i, depth, arr)
	}
	switch c = p[i]; {
	case c == '0':
		i++
		goto numZero
	case '1' <= c && c <= '9':
		i++
		goto numInt
	}
	t.fail(t.m.off+int64(i), codeNumber, c)
	return i

numZero:
	if i == len(p) {
		return t.suspend(stNumZero, i, depth, arr)
	}
	goto numTail

numInt:
	if i = skipDigits(p, i); i == len(p) {
		return t.suspend(stNumInt, i, depth, arr)
	}
numTail: // after the integer part
	if p[i] == '.' {
		i++
		goto numDot
	}
numExpMark: // after the integer part or the fraction: an exponent, or the end
	if c = p[i]; c == 'e' || c == 'E' {
		i++
		goto numExp
	}
	goto end

numDot:
	if i == len(p) {
		return t.suspend(stNumDot, i, depth, arr)
	}
	if c = p[i]; !digits[c] {
		t.fail(t.m.off+int64(i), codeDot, c)
		return i
	}
	i++
numFrac:
	if i = skipDigits(p, i); i == len(p) {
		return t.suspend(stNumFrac, i, depth, arr)
	}
	goto numExpMark

numExp:
	if i == len(p) {
		return t.suspend(stNumExp, i, depth, arr)
	}
	if c = p[i]; c == '+' || c == '-' {
		i++
		goto numExpSign
	}
	goto numExpDigit
numExpSign:
	if i == len(p) {
		return t.suspend(stNumExpSign, i, depth, arr)
	}
	c = p[i]
numExpDigit: // c = p[i] must be the exponent's first digit
	if !digits[c] {
		t.fail(t.m.off+int64(i), codeExponent, c)
		return i
	}
	i++
numExpDigits:
	if i = skipDigits(p, i); i == len(p) {
		return t.suspend(stNumExpDigits, i, depth, arr)
	}
	goto end

pop: // p[i] closes the innermost container
	i++
	depth--
	if depth > 0 {
		arr = t.stack[depth>>6]>>(depth&63)&1 != 0
	}
end: // a value ended just before p[i]
	if depth > 1 {
		var x laneExit
		i, depth, arr, x = t.runLane(p, i, depth, arr)
		switch x {
		case exAfter:
			goto after
		case exEnd:
			goto end
		case exValue:
			goto value
		case exFirst:
			goto first
		case exObjectKey:
			goto objectKey
		case exColon:
			goto colon
		case exValStr:
			goto valStr
		}
		goto keyStr
	}
	{
		if depth == 0 {
			t.m.val.End = t.m.off + int64(i)
			return t.suspend(stDone, i, depth, arr)
		}
		if t.m.cur != 0 {
			t.m.rng[t.m.cur-1].End = t.m.off + int64(i)
			t.m.done |= 1 << (t.m.cur - 1)
			t.m.cur = 0
		}
	}
after:
	if i == len(p) {
		return t.suspend(stAfter, i, depth, arr)
	}
	if c = p[i]; c == ',' {
		// Compact JSON: the next key or string element follows the
		// comma at once.
		if depth > 1 && i < len(p)-1 && p[i+1] == '"' {
			i += 2
			if arr {
				goto valStr
			}
			goto keyStr
		}
		i++
		if arr {
			goto value
		}
		goto objectKey
	}
	switch c {
	case '}':
		if !arr {
			goto pop
		}
	case ']':
		if arr {
			goto pop
		}
	case ' ', '\t', '\n', '\r':
		i++
		goto after
	}
	if arr {
		t.fail(t.m.off+int64(i), codeArraySep, c)
	} else {
		t.fail(t.m.off+int64(i), codeObjectSep, c)
	}
	return i
}

// suspend saves scan's state st and its registers, depth and arr, and
// returns i, the bytes consumed: scan's every exit at a chunk's end, and
// at the value's.
func (t *Tracker) suspend(st state, i, depth int, arr bool) int {
	t.m.st, t.m.depth, t.m.arr = st, depth, arr
	return i
}

// push opens a container at depth, an array if arr, marking it in the
// nesting stack, and returns depth and arr, the caller's new registers.
func (t *Tracker) push(depth int, arr bool) (int, bool) {
	if arr {
		t.stack[depth>>6] |= 1 << (depth & 63)
	} else {
		t.stack[depth>>6] &^= 1 << (depth & 63)
	}
	return depth, arr
}

// literalAt reports whether p holds lit from i on; for a constant lit,
// an inlined call compares a word or two, not bytes.
func literalAt(p []byte, i int, lit string) bool {
	return len(p)-i >= len(lit) && string(p[i:i+len(lit)]) == lit
}

// skipSpace returns the index of the first byte of p from i on that is
// not JSON whitespace, or len(p).
func skipSpace(p []byte, i int) int {
	for i < len(p) && isSpace(p[i]) {
		i++
	}
	return i
}

// skipDigits returns the index of the first byte of p from i on that is
// not a decimal digit, or len(p).
func skipDigits(p []byte, i int) int {
	for i < len(p) && digits[p[i]] {
		i++
	}
	return i
}

// itoa formats small non-negative ints without strconv's tables.
func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
