package filter

import (
	"fmt"
	"strings"
)

// tokKind is a token of Java's SelectorParser.jj.
type tokKind uint8

const (
	tEOF tokKind = iota
	tNot
	tAnd
	tOr
	tBetween
	tIn
	tTrue
	tFalse
	tNull
	tIs
	tContains
	tStartsWith
	tEndsWith
	tDecimal
	tFloat
	tString
	tID
	tEq     // =
	tNe     // <>
	tGt     // >
	tGe     // >=
	tLt     // <
	tLe     // <=
	tLParen // (
	tRParen // )
	tComma  // ,
	tPlus   // +
	tMinus  // -
	tError  // a lexical error, reported only if the parser reaches it
)

var keywords = map[string]tokKind{
	"NOT": tNot, "AND": tAnd, "OR": tOr, "BETWEEN": tBetween, "IN": tIn,
	"TRUE": tTrue, "FALSE": tFalse, "NULL": tNull, "IS": tIs,
	"CONTAINS": tContains, "STARTSWITH": tStartsWith, "ENDSWITH": tEndsWith,
}

type token struct {
	kind tokKind
	text string // the image; for tString the decoded value
	pos  int
}

// lex splits expr into tokens the way the JavaCC token manager does:
// longest match, keywords (case-insensitive) before identifiers of the same
// length, comments skipped only when complete ("--" needs its line end).
// Java's token manager runs lazily, so text past the last token its parser
// looks at is never checked: a lexical error becomes a tError token, the
// last one, that fails the parse only if the parser peeks at it.
func lex(expr string) []token {
	toks, err := lexEager(expr)
	if err != nil {
		toks = append(toks, token{kind: tError, text: err.Error(), pos: len(expr)})
	}
	return toks
}

func lexEager(expr string) ([]token, error) {
	var toks []token
	i := 0
	for {
		i = skipBlanks(expr, i)
		if i >= len(expr) {
			toks = append(toks, token{kind: tEOF, pos: i})
			return toks, nil
		}
		c := expr[i]
		start := i
		switch {
		case isIDStart(c):
			for i++; i < len(expr) && isIDPart(expr[i]); i++ {
			}
			word := expr[start:i]
			k, ok := keywords[strings.ToUpper(word)]
			if !ok {
				k = tID
			}
			toks = append(toks, token{kind: k, text: word, pos: start})
		case isDigit(c) || (c == '.' && i+1 < len(expr) && isDigit(expr[i+1])):
			k, n := scanNumber(expr[i:])
			if n == 0 {
				return toks, fmt.Errorf("lexical error at column %d: %q", start+1, c)
			}
			i += n
			toks = append(toks, token{kind: k, text: expr[start:i], pos: start})
		case c == '\'':
			var b strings.Builder
			for i++; ; i++ {
				if i >= len(expr) {
					return toks, fmt.Errorf("lexical error at column %d: unterminated string literal", start+1)
				}
				if expr[i] == '\'' {
					if i+1 < len(expr) && expr[i+1] == '\'' {
						b.WriteByte('\'')
						i++
						continue
					}
					i++
					break
				}
				b.WriteByte(expr[i])
			}
			toks = append(toks, token{kind: tString, text: b.String(), pos: start})
		default:
			k, n := punct(expr[i:])
			if n == 0 {
				return toks, fmt.Errorf("lexical error at column %d: unexpected %q", start+1, rune(c))
			}
			i += n
			toks = append(toks, token{kind: k, text: expr[start:i], pos: start})
		}
	}
}

// skipBlanks skips white space, complete "--" line comments and complete
// block comments from i.
func skipBlanks(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f':
			i++
		case strings.HasPrefix(s[i:], "--"):
			// Java's LINE_COMMENT needs its terminator; without one the
			// two dashes are minus signs.
			j := strings.IndexAny(s[i:], "\n\r")
			if j < 0 {
				return i
			}
			i += j + 1
			if s[i-1] == '\r' && i < len(s) && s[i] == '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return i // "/" is no token: the lexer reports it
			}
			i += 2 + j + 2
		default:
			return i
		}
	}
	return i
}

func punct(s string) (tokKind, int) {
	switch s[0] {
	case '=':
		return tEq, 1
	case '<':
		if len(s) > 1 && s[1] == '>' {
			return tNe, 2
		}
		if len(s) > 1 && s[1] == '=' {
			return tLe, 2
		}
		return tLt, 1
	case '>':
		if len(s) > 1 && s[1] == '=' {
			return tGe, 2
		}
		return tGt, 1
	case '(':
		return tLParen, 1
	case ')':
		return tRParen, 1
	case ',':
		return tComma, 1
	case '+':
		return tPlus, 1
	case '-':
		return tMinus, 1
	}
	return tEOF, 0
}

// scanNumber returns the longest of DECIMAL_LITERAL ("0" | [1-9][0-9]*[lL]?)
// and FLOATING_POINT_LITERAL at the start of s; a tie is a decimal.
func scanNumber(s string) (tokKind, int) {
	dec := 0
	if s[0] == '0' {
		dec = 1
	} else if s[0] >= '1' && s[0] <= '9' {
		dec = digits(s)
		if dec < len(s) && (s[dec] == 'l' || s[dec] == 'L') {
			dec++
		}
	}
	flt := 0
	d := digits(s)
	switch {
	case d > 0 && d < len(s) && s[d] == '.':
		n := d + 1
		n += digits(s[n:])
		n += exponent(s[n:])
		flt = n
	case d == 0 && s[0] == '.':
		if f := digits(s[1:]); f > 0 {
			flt = 1 + f + exponent(s[1+f:])
		}
	case d > 0:
		if e := exponent(s[d:]); e > 0 {
			flt = d + e
		}
	}
	if flt > dec {
		return tFloat, flt
	}
	return tDecimal, dec
}

func digits(s string) int {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}

// exponent is the length of an EXPONENT ([eE][+-]?[0-9]+) at the start of
// s, or 0.
func exponent(s string) int {
	if len(s) == 0 || (s[0] != 'e' && s[0] != 'E') {
		return 0
	}
	n := 1
	if n < len(s) && (s[n] == '+' || s[n] == '-') {
		n++
	}
	d := digits(s[n:])
	if d == 0 {
		return 0
	}
	return n + d
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIDStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}

func isIDPart(c byte) bool { return isIDStart(c) || isDigit(c) }
