package spec

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The lexer follows the lexer rules of k3po's Robot.g4 (the grammar of
// aklivity's k3po 3.4, which Zilla's specs run on). Whitespace, newlines
// included, only separates tokens: a statement may continue on the next
// line, and Zilla's scripts rely on that for long writes and ${…} builders.
// Comments run from # to the end of the line.

// srcFile maps byte offsets of a source to positions.
type srcFile struct {
	name       string
	src        []byte
	lineStarts []int
	base       Pos // position of offset 0; Line 0 means 1:1
}

func newSrcFile(name string, src []byte) *srcFile {
	f := &srcFile{name: name, src: src, lineStarts: []int{0}}
	for i, c := range src {
		if c == '\n' {
			f.lineStarts = append(f.lineStarts, i+1)
		}
	}
	return f
}

// pos returns the position of byte offset off.
func (f *srcFile) pos(off int) Pos {
	line := sort.Search(len(f.lineStarts), func(i int) bool { return f.lineStarts[i] > off }) - 1
	line = max(line, 0)
	col := off - f.lineStarts[line] + 1
	if f.base.Line == 0 {
		return Pos{File: f.name, Line: line + 1, Col: col}
	}
	if line == 0 {
		col += f.base.Col - 1
	}
	return Pos{File: f.name, Line: f.base.Line + line, Col: col}
}

// bailout is panicked by fail to unwind to Parse; nothing else is.
type bailout struct{}

// add appends an error at pos.
func (l *ErrorList) add(pos Pos, format string, args ...any) {
	*l = append(*l, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tKeyword
	tName       // identifier
	tQName      // ns:name(.name)*
	tText       // "…" or '…'
	tBytes      // [0x01 0x02]
	tNumber     // 12, -3, 0x1F, with an optional s or L suffix
	tExpr       // ${…}
	tRegex      // /…/
	tCapture    // :name
	tFixedOpen  // [0..
	tFixedCap   // ([0..
	tRepeatOpen // [(
	tRepeatMid  // ){
	tRepeatEnd  // }]
	tNumCap     // (byte (short (int (long
	tRParen     // )
	tRBracket   // ]
)

type token struct {
	kind tokKind
	off  int
	end  int
	text string // keyword, name, qualified name, capture name, number digits, regex pattern, or (byte…
	str  string // decoded text literal
	b    []byte // bytes literal
	sfx  byte   // number suffix: 's', 'L' or 0
	x    Expr   // parsed ${…}
}

// keywords are the reserved words of Robot.g4.
var keywords = map[string]bool{
	"abort": true, "aborted": true, "accept": true, "accepted": true,
	"advise": true, "advised": true, "as": true, "await": true, "bind": true,
	"bound": true, "byte": true, "child": true, "close": true, "closed": true,
	"config": true, "connect": true, "connected": true, "disconnect": true,
	"disconnected": true, "int": true, "flush": true, "long": true,
	"missing": true, "notify": true, "opened": true, "option": true,
	"property": true, "read": true, "rejected": true, "short": true,
	"unbind": true, "unbound": true, "write": true,
}

type lexer struct {
	f     *srcFile
	off   int
	errs  *ErrorList
	warns *ErrorList
}

func (l *lexer) fail(off int, format string, args ...any) {
	l.errs.add(l.f.pos(off), format, args...)
	panic(bailout{})
}

// next returns the next token.
//
// A character that cannot begin any token of Robot.g4 (a stray "." or
// "@", say) is dropped with a warning, because that is what k3po does:
// its ANTLR lexer reports "token recognition error" on the console, skips
// the character and goes on. At least one of Zilla's live scenarios relies
// on it (`read [0...100000]` reads as `read [0..100000]`).
func (l *lexer) next() token {
	for {
		if t, ok := l.lex(); ok {
			return t
		}
	}
}

// lex returns the next token, or false after dropping a character.
func (l *lexer) lex() (token, bool) {
	src := l.f.src
	l.skip()
	off := l.off
	if off >= len(src) {
		return token{kind: tEOF, off: off, end: off}, true
	}
	t := token{off: off}
	c := src[off]
	switch {
	case c == '"' || c == '\'':
		t.kind = tText
		t.str, l.off = l.text(off)
	case c == '$' && off+1 < len(src) && src[off+1] == '{':
		t.kind = tExpr
		t.x, t.text, l.off = l.expr(off)
	case c == '[':
		switch {
		case strings.HasPrefix(string(src[off:min(off+4, len(src))]), "[0.."):
			t.kind, l.off = tFixedOpen, off+4
		case off+1 < len(src) && src[off+1] == '(':
			t.kind, l.off = tRepeatOpen, off+2
		default:
			t.kind = tBytes
			t.b, l.off = l.bytes(off)
		}
	case c == '(':
		rest := string(src[off:min(off+6, len(src))])
		switch {
		case strings.HasPrefix(rest, "([0.."):
			t.kind, l.off = tFixedCap, off+5
		case strings.HasPrefix(rest, "(byte"), strings.HasPrefix(rest, "(int"),
			strings.HasPrefix(rest, "(long"), strings.HasPrefix(rest, "(short"):
			n := 1
			for off+n < len(src) && 'a' <= src[off+n] && src[off+n] <= 'z' {
				n++
			}
			t.kind, t.text, l.off = tNumCap, string(src[off+1:off+n]), off+n
			if t.text != "byte" && t.text != "short" && t.text != "int" && t.text != "long" {
				l.fail(off, "expected (byte:, (short:, (int: or (long:, found %q", "("+t.text)
			}
		default:
			l.drop(off)
			return token{}, false
		}
	case c == ')':
		if off+1 < len(src) && src[off+1] == '{' {
			t.kind, l.off = tRepeatMid, off+2
		} else {
			t.kind, l.off = tRParen, off+1
		}
	case c == '}' && off+1 < len(src) && src[off+1] == ']':
		t.kind, l.off = tRepeatEnd, off+2
	case c == ']':
		t.kind, l.off = tRBracket, off+1
	case c == '/':
		t.kind = tRegex
		t.text, l.off = l.regex(off)
	case c == ':' && off+1 < len(src) && isIdentStart(src[off+1:]):
		t.kind = tCapture
		n := identLen(src[off+1:])
		t.text, l.off = string(src[off+1:off+1+n]), off+1+n
	case isDigit(c) || (c == '+' || c == '-') && off+1 < len(src) && isDigit(src[off+1]):
		t.kind = tNumber
		t.text, t.sfx, l.off = l.number(off)
	case isIdentStart(src[off:]):
		n := identLen(src[off:])
		end := off + n
		t.text, t.kind = string(src[off:end]), tName
		// Identifier ':' Identifier ('.' Identifier)* is a qualified name,
		// written without spaces.
		if end+1 < len(src) && src[end] == ':' && isIdentStart(src[end+1:]) {
			end += 1 + identLen(src[end+1:])
			for end+1 < len(src) && src[end] == '.' && isIdentStart(src[end+1:]) {
				end += 1 + identLen(src[end+1:])
			}
			t.text, t.kind = string(src[off:end]), tQName
		} else if keywords[t.text] {
			t.kind = tKeyword
		}
		l.off = end
	case c == '+' || c == '-':
		// Plus and Minus are tokens of Robot.g4 that no rule accepts.
		l.fail(off, "unexpected %q; a sign must be followed by digits", c)
	default:
		l.drop(off)
		return token{}, false
	}
	t.end = l.off
	return t, true
}

// drop skips the character at off with a warning.
func (l *lexer) drop(off int) {
	_, n := utf8.DecodeRune(l.f.src[off:])
	l.warns.add(l.f.pos(off), "dropped unexpected character %s, as k3po does", quoteChar(l.f.src[off:]))
	l.off = off + n
}

// skip skips whitespace and comments.
func (l *lexer) skip() {
	src := l.f.src
	for l.off < len(src) {
		switch c := src[l.off]; {
		case isSpace(c):
			l.off++
		case c == '#':
			for l.off < len(src) && src[l.off] != '\n' && src[l.off] != '\r' {
				l.off++
			}
		default:
			return
		}
	}
}

// text scans a quoted text literal. As in Robot.g4 it is not empty, stays
// on one line and knows the escapes \b \f \r \n \t \" \' \\.
func (l *lexer) text(off int) (string, int) {
	src := l.f.src
	quote := src[off]
	var b strings.Builder
	i := off + 1
	for i < len(src) {
		switch c := src[i]; c {
		case quote:
			if i == off+1 {
				l.fail(off, "empty text literal; k3po needs at least one character between the quotes")
			}
			return b.String(), i + 1
		case '\\':
			if i+1 >= len(src) {
				l.fail(off, "text literal not terminated")
			}
			r, ok := unescape(src[i+1])
			if !ok {
				l.fail(i, `unknown escape sequence %s in text; expected one of \" \' \\ \b \f \n \r \t`, escapeDesc(src[i:]))
			}
			b.WriteByte(r)
			i += 2
		case '\n', '\r':
			l.fail(off, "text literal not terminated before the end of the line")
		default:
			b.WriteByte(c)
			i++
		}
	}
	l.fail(off, "text literal not terminated")
	return "", 0
}

// bytes scans [0x01 0x02]: two hex digits per byte, separated by spaces.
func (l *lexer) bytes(off int) ([]byte, int) {
	src := l.f.src
	var out []byte
	i := off + 1
	for {
		for i < len(src) && src[i] == ' ' {
			i++
		}
		if i < len(src) && src[i] == ']' {
			if len(out) == 0 {
				l.fail(off, "empty byte literal; expected at least one 0xHH byte")
			}
			return out, i + 1
		}
		if i+4 > len(src) || src[i] != '0' || (src[i+1] != 'x' && src[i+1] != 'X') || !isHex(src[i+2]) || !isHex(src[i+3]) {
			j := i
			for j < len(src) && j-i < 8 && src[j] != ' ' && src[j] != ']' && src[j] != '\n' && src[j] != '\r' {
				j++
			}
			found := quoteChar(src[i:])
			if j > i+1 {
				found = strconv.Quote(string(src[i:j]))
			}
			l.fail(i, `expected a byte 0xHH or "]" in byte literal, found %s`, found)
		}
		out = append(out, hexVal(src[i+2])<<4|hexVal(src[i+3]))
		i += 4
	}
}

// regex scans /pattern/. The pattern stays on one line; \/ does not end it.
func (l *lexer) regex(off int) (string, int) {
	src := l.f.src
	i := off + 1
	for i < len(src) {
		switch c := src[i]; {
		case c == '/':
			if i == off+1 {
				l.fail(off, "empty regex")
			}
			return string(src[off+1 : i]), i + 1
		case c == '\\' && i+1 < len(src) && src[i+1] == '/':
			i += 2
		case c == '\n' || c == '\r':
			l.fail(off, "regex not terminated before the end of the line")
		default:
			i++
		}
	}
	l.fail(off, "regex not terminated")
	return "", 0
}

// number scans a DecimalLiteral, SignedDecimalLiteral or HexLiteral and the
// s or L right after it.
func (l *lexer) number(off int) (string, byte, int) {
	src := l.f.src
	i := off
	if src[i] == '+' || src[i] == '-' {
		i++
	}
	if src[i] == '0' && i+2 < len(src) && (src[i+1] == 'x' || src[i+1] == 'X') && isHex(src[i+2]) && i == off {
		i += 3
		for i < len(src) && (isHex(src[i]) || src[i] == '_' && i+1 < len(src) && isHex(src[i+1])) {
			i++
		}
	} else {
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	end := i
	var sfx byte
	if i < len(src) && (src[i] == 's' || src[i] == 'L') && (i+1 >= len(src) || !isIdentPart(src[i+1:])) {
		sfx = src[i]
		i++
	}
	return string(src[off:end]), sfx, i
}

// expr parses ${…} at off and returns the expression, its source text and
// the offset after the closing }.
func (l *lexer) expr(off int) (Expr, string, int) {
	p := &exprParser{f: l.f}
	defer func() {
		if len(p.errs) > 0 {
			*l.errs = append(*l.errs, p.errs...)
		}
	}()
	p.scan(off+2, true)
	if len(p.toks) == 1 {
		p.fail(p.toks[0].off, "empty expression ${}")
	}
	x := p.parse()
	return x, string(l.f.src[off+2 : p.end-1]), p.end
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hexVal(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// isLetter is Robot.g4's Letter: $, _, ASCII letters and some ranges of
// Latin-1 and beyond.
func isLetter(r rune) bool {
	switch {
	case r == '$' || r == '_' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z':
		return true
	case 0xc0 <= r && r <= 0xd6, 0xd8 <= r && r <= 0xf6, 0xf8 <= r && r <= 0x1fff,
		0x3040 <= r && r <= 0x318f, 0x3300 <= r && r <= 0x337f, 0x3400 <= r && r <= 0x3d2d,
		0x4e00 <= r && r <= 0x9fff, 0xf900 <= r && r <= 0xfaff:
		return true
	}
	return false
}

func isIdentStart(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	r, _ := utf8.DecodeRune(b)
	return r != utf8.RuneError && isLetter(r)
}

func isIdentPart(b []byte) bool {
	return len(b) > 0 && (isDigit(b[0]) || b[0] == '-') || isIdentStart(b)
}

// identLen returns the length of Robot.g4's Identifier at the start of b:
// Letter (Digit | '-' | Letter)*.
func identLen(b []byte) int {
	i := 0
	for i < len(b) {
		if isDigit(b[i]) || b[i] == '-' {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError || !isLetter(r) {
			break
		}
		i += n
	}
	return i
}

// quoteChar describes the character at the start of b for an error.
func quoteChar(b []byte) string {
	if len(b) == 0 {
		return "end of file"
	}
	r, n := utf8.DecodeRune(b)
	if r == utf8.RuneError && n <= 1 {
		return fmt.Sprintf("byte 0x%02x", b[0])
	}
	return strconv.QuoteRune(r)
}

// escapeDesc shows the escape sequence at the start of b, a backslash and
// the character after it.
func escapeDesc(b []byte) string {
	r, _ := utf8.DecodeRune(b[1:])
	return `\` + string(r)
}

// shorten quotes s for an error, cut to a readable length.
func shorten(s string) string {
	const maxLen = 40
	if len(s) > maxLen {
		cut := maxLen
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}
