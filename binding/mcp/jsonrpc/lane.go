package jsonrpc

// laneExit says where scan takes over from lane: the label of scan's
// state machine that the lane stopped in front of.
type laneExit uint8

const (
	exAfter     laneExit = iota // after a value: ',' or a closer due
	exEnd                       // a container closed at depth <= 1
	exValue                     // a value due
	exFirst                     // after '[' or '{'
	exObjectKey                 // after ',' in an object
	exColon                     // after a key
	exValStr                    // in a value string's body
	exKeyStr                    // in a key string's body
)

// lane is scan's fast path below the top level, entered when a value has
// ended at depth > 1, just before p[i]. Below the top level nothing is
// tracked but the nesting, so lane keeps only what that needs in
// registers (a separate function gets a register allocation of its own,
// which the large scan cannot give its hot paths) and runs the common
// forms of JSON: strings without escapes, containers, literals, plain
// integers, and whitespace between tokens. Anything else, or the end of
// p, or the container at depth 2 closing, returns to scan with the label
// to continue from; there scan takes the bytes lane did not, so its rules
// (and its errors, with their offsets) are the only ones. lane never
// rejects a byte itself and never consumes a byte scan would reject.
//
// On amd64 scan runs laneAMD64 (lane_amd64.s), this function in assembly:
// Go lays lane's common path out with a taken branch at nearly every
// token, which made it 1.35 times as slow. This one stays the portable
// lane and the reference the assembly is tested against, state by state.
func (t *Tracker) lane(p []byte, i, depth int, arr bool) (int, int, bool, laneExit) {
	var (
		c byte
		e int
	)

after: // a value ended just before p[i]
	if uint(i) >= uint(len(p)) {
		return i, depth, arr, exAfter
	}
	if c = p[i]; c == ',' {
		i++
		if arr {
			goto value
		}
		goto key
	}
	if c == '}' && !arr || c == ']' && arr {
		i++
		goto pop
	}
	if isSpace(c) {
		i++
		goto after
	}
	return i, depth, arr, exAfter

pop: // p[i-1] closed the innermost container
	depth--
	arr = t.stack[depth>>6]>>(depth&63)&1 != 0
	if depth > 1 {
		goto after
	}
	return i, depth, arr, exEnd

key: // after ',' in an object: whitespace, then a key due
	if i = skipSpace(p, i); uint(i) >= uint(len(p)) || p[i] != '"' {
		return i, depth, arr, exObjectKey
	}
	i++
keyBody: // p[i-1] opened a key
	if e = t.win.find(i); uint(e) >= uint(len(p)) || p[e] != '"' {
		return e, depth, arr, exKeyStr
	}
	i = e + 1
	// A key ended just before p[i]: whitespace, then ':' due.
	if i = skipSpace(p, i); uint(i) >= uint(len(p)) || p[i] != ':' {
		return i, depth, arr, exColon
	}
	i++

value: // a value due at p[i]
	if uint(i) >= uint(len(p)) {
		return i, depth, arr, exValue
	}
	if c = p[i]; c == '"' {
		i++
		if e = t.win.find(i); uint(e) >= uint(len(p)) || p[e] != '"' {
			return e, depth, arr, exValStr
		}
		i = e + 1
		goto after
	}
	switch c {
	case ' ', '\t', '\n', '\r':
		i++
		goto value
	case '{', '[':
		if depth == t.maxDepth {
			return i, depth, arr, exValue
		}
		depth, arr = t.push(depth+1, c == '[')
		i++
		goto first
	case 't':
		if literalAt(p, i, "true") {
			i += 4
			goto after
		}
	case 'f':
		if literalAt(p, i, "false") {
			i += 5
			goto after
		}
	case 'n':
		if literalAt(p, i, "null") {
			i += 4
			goto after
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		// An integer, when all of it is in p: -?(0|[1-9][0-9]*) and then
		// a byte that cannot continue a number. Fractions, exponents and
		// anything malformed are scan's.
		e = i
		if c == '-' {
			e++
		}
		if uint(e) >= uint(len(p)) {
			break
		}
		if c = p[e]; c == '0' {
			e++
		} else if '1' <= c && c <= '9' {
			for e++; uint(e) < uint(len(p)) && digits[p[e]]; e++ {
			}
		} else {
			break
		}
		if uint(e) >= uint(len(p)) {
			break
		}
		if c = p[e]; c == '.' || c == 'e' || c == 'E' {
			break
		}
		i = e
		goto after
	}
	return i, depth, arr, exValue

first: // p[i-1] opened a container: its closer, or its first key or element
	if uint(i) < uint(len(p)) {
		c = p[i]
		if arr {
			if c == ']' {
				i++
				goto pop
			}
			if !isSpace(c) {
				goto value
			}
		} else {
			if c == '"' {
				i++
				goto keyBody
			}
			if c == '}' {
				i++
				goto pop
			}
		}
	}
	return i, depth, arr, exFirst
}
