package idl

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokenKind classifies a token.
type tokenKind uint8

const (
	tokEOF tokenKind = iota
	tokIdent
	tokInt
	tokString
	tokLBrace    // {
	tokRBrace    // }
	tokLParen    // (
	tokRParen    // )
	tokLBrack    // [
	tokRBrack    // ]
	tokLAngle    // <
	tokRAngle    // >
	tokSemicolon // ;
	tokColon     // :
	tokScopeSep  // ::
	tokComma     // ,
	tokAssign    // =
	tokMinus     // -
)

var punctuation = map[byte]tokenKind{
	'{': tokLBrace, '}': tokRBrace, '(': tokLParen, ')': tokRParen,
	'[': tokLBrack, ']': tokRBrack, '<': tokLAngle, '>': tokRAngle,
	';': tokSemicolon, ',': tokComma, '=': tokAssign, '-': tokMinus,
}

var tokenText = map[tokenKind]string{
	tokLBrace: "{", tokRBrace: "}", tokLParen: "(", tokRParen: ")",
	tokLBrack: "[", tokRBrack: "]", tokLAngle: "<", tokRAngle: ">",
	tokSemicolon: ";", tokColon: ":", tokScopeSep: "::", tokComma: ",",
	tokAssign: "=", tokMinus: "-",
}

// quote renders a token kind as it is written, for "expected" messages.
func (k tokenKind) quote() string {
	if s, ok := tokenText[k]; ok {
		return "'" + s + "'"
	}
	switch k {
	case tokIdent:
		return "identifier"
	case tokInt:
		return "integer"
	case tokString:
		return "string"
	}
	return "end of file"
}

// token is one lexical token.
type token struct {
	kind tokenKind
	pos  Pos
	text string // the source text; for strings the unescaped value
	num  uint64 // the magnitude of an integer literal
}

// String describes the token for "found …" messages.
func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of file"
	case tokIdent:
		if keywords[t.text] {
			return "'" + t.text + "'"
		}
		return fmt.Sprintf("identifier %q", t.text)
	case tokInt:
		return "integer " + t.text
	case tokString:
		s := t.text
		if len(s) > 20 {
			s = s[:20] + "…"
		}
		return fmt.Sprintf("string %q", s)
	}
	return t.kind.quote()
}

// keywords are the words of the dialect, including the primitive type names.
// None can name a scope, declaration, field or enum constant.
var keywords = map[string]bool{
	"scope": true, "option": true, "byteorder": true, "native": true, "network": true,
	"struct": true, "union": true, "enum": true, "typedef": true, "as": true,
	"list": true, "using": true, "variant": true, "map": true, "array": true,
	"switch": true, "case": true, "default": true, "of": true, "extends": true,
	"required": true, "readonly": true, "null": true,
	"string": true, "varstring": true, "varuint32n": true,
}

func init() {
	for _, name := range primNames {
		if name != "" {
			keywords[name] = true
		}
	}
}

// lexer splits a source into tokens. It is a value type so that the parser
// can look ahead by copying it.
type lexer struct {
	file      string
	src       []byte
	off       int // offset of the next unread byte
	line      int
	lineStart int // offset of the first byte of the current line
}

func newLexer(file string, src []byte) lexer {
	return lexer{file: file, src: src, line: 1}
}

func (l *lexer) pos(off int) Pos {
	return Pos{File: l.file, Line: l.line, Col: off - l.lineStart + 1}
}

func (l *lexer) errorf(off int, format string, args ...any) *Error {
	return &Error{Pos: l.pos(off), Msg: fmt.Sprintf(format, args...)}
}

func (l *lexer) newline(off int) {
	l.line++
	l.lineStart = off + 1
}

// skipSpace skips white space and comments.
func (l *lexer) skipSpace() *Error {
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch {
		case c == '\n':
			l.newline(l.off)
			l.off++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			l.off++
		case c == '/' && l.off+1 < len(l.src) && l.src[l.off+1] == '/':
			for l.off < len(l.src) && l.src[l.off] != '\n' {
				l.off++
			}
		case c == '/' && l.off+1 < len(l.src) && l.src[l.off+1] == '*':
			startPos := l.pos(l.off)
			l.off += 2
			for {
				if l.off+1 >= len(l.src) {
					l.off = len(l.src)
					return &Error{Pos: startPos, Msg: "comment not terminated: expected '*/', found end of file"}
				}
				if l.src[l.off] == '*' && l.src[l.off+1] == '/' {
					l.off += 2
					break
				}
				if l.src[l.off] == '\n' {
					l.newline(l.off)
				}
				l.off++
			}
		default:
			return nil
		}
	}
	return nil
}

func isLetter(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isHexDigit(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// next returns the next token.
func (l *lexer) next() (token, *Error) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	start := l.off
	tok := token{pos: l.pos(start)}
	if start >= len(l.src) {
		tok.kind = tokEOF
		return tok, nil
	}
	c := l.src[start]
	switch {
	case isLetter(c):
		for l.off < len(l.src) && (isLetter(l.src[l.off]) || isDigit(l.src[l.off])) {
			l.off++
		}
		tok.kind, tok.text = tokIdent, string(l.src[start:l.off])
		return tok, nil
	case isDigit(c):
		return l.number(tok)
	case c == '"':
		return l.string(tok)
	case c == ':':
		l.off++
		tok.kind = tokColon
		if l.off < len(l.src) && l.src[l.off] == ':' {
			l.off++
			tok.kind = tokScopeSep
		}
		return tok, nil
	}
	if k, ok := punctuation[c]; ok {
		l.off++
		tok.kind = k
		return tok, nil
	}
	r, size := utf8.DecodeRune(l.src[start:])
	if r == utf8.RuneError && size <= 1 {
		return token{}, l.errorf(start, "invalid UTF-8 byte 0x%02x", c)
	}
	return token{}, l.errorf(start, "unexpected character %q", r)
}

// number scans a decimal or 0x hexadecimal integer with an optional Java
// long suffix (L or l). Hex digits may be separated by '_'.
func (l *lexer) number(tok token) (token, *Error) {
	start := l.off
	base, digits := 10, start
	if l.src[start] == '0' && l.off+1 < len(l.src) && (l.src[l.off+1] == 'x' || l.src[l.off+1] == 'X') {
		base = 16
		l.off += 2
		digits = l.off
		for l.off < len(l.src) && (isHexDigit(l.src[l.off]) || l.src[l.off] == '_') {
			l.off++
		}
	} else {
		for l.off < len(l.src) && isDigit(l.src[l.off]) {
			l.off++
		}
	}
	end := l.off
	if l.off < len(l.src) && (l.src[l.off] == 'L' || l.src[l.off] == 'l') {
		l.off++
	}
	if l.off < len(l.src) && (isLetter(l.src[l.off]) || isDigit(l.src[l.off])) {
		for l.off < len(l.src) && (isLetter(l.src[l.off]) || isDigit(l.src[l.off])) {
			l.off++
		}
		return token{}, l.errorf(start, "malformed integer literal %q", l.src[start:l.off])
	}
	tok.kind, tok.text = tokInt, string(l.src[start:l.off])
	text := strings.ReplaceAll(string(l.src[digits:end]), "_", "")
	if text == "" {
		return token{}, l.errorf(start, "malformed integer literal %q: expected hex digits after 0x", tok.text)
	}
	n, err := strconv.ParseUint(text, base, 64)
	if err != nil {
		return token{}, l.errorf(start, "integer literal %s is too large (the maximum is %d)", tok.text, uint64(math.MaxUint64))
	}
	tok.num = n
	return tok, nil
}

// string scans a double-quoted string literal with the escapes \" \\ \n \t
// \r and \uXXXX. A string cannot span lines.
func (l *lexer) string(tok token) (token, *Error) {
	var b strings.Builder
	l.off++ // opening quote
	for {
		if l.off >= len(l.src) || l.src[l.off] == '\n' {
			return token{}, &Error{Pos: tok.pos, Msg: "string literal not terminated: expected '\"' before end of line"}
		}
		c := l.src[l.off]
		switch c {
		case '"':
			l.off++
			tok.kind, tok.text = tokString, b.String()
			if !utf8.ValidString(tok.text) {
				return token{}, &Error{Pos: tok.pos, Msg: "string literal is not valid UTF-8"}
			}
			return tok, nil
		case '\\':
			esc := l.off
			l.off++
			if l.off >= len(l.src) {
				continue // reported as unterminated
			}
			switch e := l.src[l.off]; e {
			case '"', '\\':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'u':
				if l.off+4 >= len(l.src) {
					return token{}, l.errorf(esc, "invalid escape: expected 4 hex digits after \\u")
				}
				hex := string(l.src[l.off+1 : l.off+5])
				v, err := strconv.ParseUint(hex, 16, 16)
				if err != nil {
					return token{}, l.errorf(esc, "invalid escape: expected 4 hex digits after \\u, found %q", hex)
				}
				r := rune(v)
				if !utf8.ValidRune(r) {
					return token{}, l.errorf(esc, "invalid escape \\u%s: not a Unicode character", hex)
				}
				b.WriteRune(r)
				l.off += 4
			default:
				r, _ := utf8.DecodeRune(l.src[l.off:])
				return token{}, l.errorf(esc, "invalid escape %q in string literal (allowed: \\\" \\\\ \\n \\t \\r \\uXXXX)", "\\"+string(r))
			}
			l.off++
		default:
			b.WriteByte(c)
			l.off++
		}
	}
}
