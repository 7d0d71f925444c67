package filter

import (
	"errors"
	"fmt"

	"github.com/rocketd/rocketd/internal/message"
)

// ErrInvalid wraps every compile error; the message follows Java's
// MQFilterException ("Invalid MessageSelector. ...").
var ErrInvalid = errors.New("Invalid MessageSelector.")

// maxDepth bounds nesting so a hostile expression cannot exhaust the stack;
// maxNodes bounds the size (and so the depth of evaluation: a chain of ANDs
// is a left-deep tree). Java has neither limit; no real selector nears them.
const (
	maxDepth = 200
	maxNodes = 10000
)

// Compile parses expr with the grammar of Java's SelectorParser.jj and the
// checks its expression constructors make (a string or boolean constant
// compared with <, a NULL constant in =, BETWEEN bounds in the wrong order,
// IN on a non-property, a non-boolean where a boolean is needed, ...).
func Compile(expr string) (*Expr, error) {
	p := &parser{toks: lex(expr), e: &Expr{text: expr}}
	root, err := p.parse()
	if err != nil {
		return nil, fmt.Errorf("%w %v", ErrInvalid, err)
	}
	p.e.root = root
	p.e.specialise()
	p.e.bindTags()
	return p.e, nil
}

type parser struct {
	toks  []token
	pos   int
	e     *Expr
	depth int
}

type parseError struct{ err error }

func (p *parser) fail(format string, args ...any) {
	panic(parseError{fmt.Errorf(format, args...)})
}

func (p *parser) parse() (root int32, err error) {
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(parseError)
			if !ok {
				panic(r)
			}
			err = pe.err
		}
	}()
	// Like Java's JmsSelector, the parse ends after the expression
	// without asking for the end of input: trailing tokens are ignored
	// ("a = 6 b = 1" is "a = 6").
	return p.asBoolean(p.orExpr()), nil
}

func (p *parser) peek() token { return p.peekAt(0) }

// peekAt returns the token k places ahead; reaching a lexical error fails.
func (p *parser) peekAt(k int) token {
	t := p.toks[min(p.pos+k, len(p.toks)-1)]
	if t.kind == tError {
		p.fail("%s", t.text)
	}
	return t
}

func (p *parser) next() token {
	t := p.peek()
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *parser) expect(k tokKind, what string) token {
	t := p.next()
	if t.kind != k {
		if t.kind == tEOF {
			p.fail("expected %s at the end", what)
		}
		p.fail("encountered %q at column %d, expected %s", t.text, t.pos+1, what)
	}
	return t
}

func (p *parser) add(n node) int32 {
	if len(p.e.nodes) >= maxNodes {
		p.fail("expression has more than %d operations", maxNodes)
	}
	p.e.nodes = append(p.e.nodes, n)
	return int32(len(p.e.nodes) - 1)
}

// slot returns the index of a property name in Expr.names, adding it.
func (p *parser) slot(name string) int {
	for i, n := range p.e.names {
		if n == name {
			return i
		}
	}
	p.e.names = append(p.e.names, name)
	if len(p.e.names) <= maxSlots && name != "" {
		p.e.firsts[name[0]>>6] |= 1 << (name[0] & 63)
	}
	p.e.needles = append(p.e.needles, string(message.PropertySeparator)+name+string(message.NameValueSeparator))
	return len(p.e.names) - 1
}

func (p *parser) enter() {
	if p.depth++; p.depth > maxDepth {
		p.fail("expression nested deeper than %d", maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

// asBoolean is SelectorParser.asBooleanExpression: a property is cast, any
// other non-boolean is an error.
func (p *parser) asBoolean(i int32) int32 {
	if p.e.isBoolean(i) {
		return i
	}
	if p.e.nodes[i].op == opProp {
		return p.add(node{op: opCast, l: i})
	}
	p.fail("expression will not result in a boolean value: %s", p.describe(i))
	return 0
}

func (p *parser) describe(i int32) string {
	n := &p.e.nodes[i]
	switch n.op {
	case opConst:
		return constantText(n.v)
	case opProp:
		return n.v.s
	}
	return "a sub-expression"
}

func (p *parser) orExpr() int32 {
	p.enter()
	defer p.leave()
	left := p.andExpr()
	for p.peek().kind == tOr {
		p.next()
		right := p.andExpr()
		left = p.add(node{op: opOr, l: p.asBoolean(left), r: p.asBoolean(right)})
	}
	return left
}

func (p *parser) andExpr() int32 {
	left := p.equalityExpr()
	for p.peek().kind == tAnd {
		p.next()
		right := p.equalityExpr()
		left = p.add(node{op: opAnd, l: p.asBoolean(left), r: p.asBoolean(right)})
	}
	return left
}

func (p *parser) equalityExpr() int32 {
	left := p.comparisonExpr()
	for {
		switch t := p.peek(); {
		case t.kind == tEq:
			p.next()
			left = p.createEqual(left, p.comparisonExpr())
		case t.kind == tNe:
			p.next()
			left = p.add(node{op: opNot, l: p.createEqual(left, p.comparisonExpr())})
		case t.kind == tIs && p.peekAt(1).kind == tNull:
			p.pos += 2
			left = p.add(node{op: opIsNull, l: left})
		case t.kind == tIs:
			p.next()
			p.expect(tNot, "NULL or NOT NULL after IS")
			p.expect(tNull, "NULL after IS NOT")
			left = p.add(node{op: opNot, l: p.add(node{op: opIsNull, l: left})})
		default:
			return left
		}
	}
}

// createEqual is ComparisonExpression.createEqual with its operand checks.
func (p *parser) createEqual(l, r int32) int32 {
	for _, i := range []int32{l, r} {
		if n := &p.e.nodes[i]; n.op == opConst && n.v.k == kNull {
			p.fail("'NULL' cannot be compared")
		}
	}
	ln, rn := &p.e.nodes[l], &p.e.nodes[r]
	if ln.op == opConst && rn.op == opConst && p.e.isBoolean(l) && !p.e.isBoolean(r) {
		p.fail("'%s' cannot be compared with '%s'", constantText(ln.v), constantText(rn.v))
	}
	return p.add(node{op: opEq, l: l, r: r})
}

// checkLessThanOperand: only numbers and non-boolean expressions may be
// ordered.
func (p *parser) checkLessThanOperand(i int32) {
	n := &p.e.nodes[i]
	if n.op == opConst {
		if n.v.isNumber() {
			return
		}
		p.fail("value '%s' cannot be compared", constantText(n.v))
	}
	if p.e.isBoolean(i) {
		p.fail("value '%s' cannot be compared", p.describe(i))
	}
}

func (p *parser) ordered(o op, l, r int32) int32 {
	p.checkLessThanOperand(l)
	p.checkLessThanOperand(r)
	return p.add(node{op: o, l: l, r: r})
}

var notFollowers = map[tokKind]bool{tContains: true, tStartsWith: true, tEndsWith: true, tBetween: true, tIn: true}

func (p *parser) comparisonExpr() int32 {
	left := p.unaryExpr()
	for {
		t := p.peek()
		not := false
		if t.kind == tNot && notFollowers[p.peekAt(1).kind] {
			not = true
			p.next()
			t = p.peek()
		}
		switch t.kind {
		case tGt, tGe, tLt, tLe: // never after NOT: see notFollowers
			p.next()
			o := map[tokKind]op{tGt: opGt, tGe: opGe, tLt: opLt, tLe: opLe}[t.kind]
			left = p.ordered(o, left, p.unaryExpr())
		case tContains, tStartsWith, tEndsWith:
			p.next()
			s := p.expect(tString, "a string literal").text
			o := map[tokKind]op{tContains: opContains, tStartsWith: opStarts, tEndsWith: opEnds}[t.kind]
			if not {
				o++ // each NOT variant follows its positive op
			}
			left = p.add(node{op: o, l: left, v: value{k: kString, s: s}})
		case tBetween:
			p.next()
			low := p.unaryExpr()
			p.expect(tAnd, "AND in BETWEEN")
			high := p.unaryExpr()
			if not {
				left = p.add(node{op: opOr, l: p.ordered(opLt, left, low), r: p.ordered(opGt, left, high)})
			} else {
				p.checkBetween(low, high)
				left = p.add(node{op: opAnd, l: p.ordered(opGe, left, low), r: p.ordered(opLe, left, high)})
			}
		case tIn:
			p.next()
			if p.e.nodes[left].op != opProp {
				p.fail("expected a property for In expression, got: %s", p.describe(left))
			}
			p.expect(tLParen, "( after IN")
			list := []string{p.expect(tString, "a string literal in IN").text}
			for p.peek().kind == tComma {
				p.next()
				list = append(list, p.expect(tString, "a string literal in IN").text)
			}
			p.expect(tRParen, ") closing IN")
			n := node{op: opIn, l: left, not: not}
			if len(list) < 5 {
				n.in = list
			} else {
				n.set = make(map[string]struct{}, len(list))
				for _, s := range list {
					n.set[s] = struct{}{}
				}
			}
			left = p.add(n)
		default:
			return left
		}
	}
}

// checkBetween is createBetween's check of two constant bounds.
func (p *parser) checkBetween(low, high int32) {
	ln, hn := &p.e.nodes[low], &p.e.nodes[high]
	if ln.op != opConst || hn.op != opConst {
		return
	}
	if ln.v.k == kNull || hn.v.k == kNull {
		p.fail("illegal values of between, values can not be null")
	}
	c, ok := compareValues(hn.v, ln.v)
	if !ok {
		p.fail("illegal values of between: %s and %s", constantText(ln.v), constantText(hn.v))
	}
	if c < 0 {
		p.fail("illegal values of between, left value(%s) must less than or equal to right value(%s)",
			constantText(ln.v), constantText(hn.v))
	}
}

func (p *parser) unaryExpr() int32 {
	p.enter()
	defer p.leave()
	switch p.peek().kind {
	case tPlus:
		p.next()
		return p.unaryExpr()
	case tMinus:
		p.next()
		return p.add(node{op: opNeg, l: p.unaryExpr()})
	case tNot:
		p.next()
		return p.add(node{op: opNot, l: p.asBoolean(p.unaryExpr())})
	}
	return p.primaryExpr()
}

func (p *parser) primaryExpr() int32 {
	t := p.next()
	switch t.kind {
	case tString:
		return p.add(node{op: opConst, v: value{k: kString, s: t.text}})
	case tDecimal:
		v, err := parseDecimal(t.text)
		if err != nil {
			p.fail("%v", err)
		}
		return p.add(node{op: opConst, v: v})
	case tFloat:
		v, err := parseFloatLiteral(t.text)
		if err != nil {
			p.fail("%v", err)
		}
		return p.add(node{op: opConst, v: v})
	case tTrue:
		return p.add(node{op: opConst, v: trueV})
	case tFalse:
		return p.add(node{op: opConst, v: falseV})
	case tNull:
		return p.add(node{op: opConst, v: nullV})
	case tID:
		return p.add(node{op: opProp, v: value{k: kString, s: t.text}, n: p.slot(t.text)})
	case tLParen:
		i := p.orExpr()
		p.expect(tRParen, ")")
		return i
	case tEOF:
		p.fail("unexpected end of expression")
	}
	p.fail("encountered %q at column %d", t.text, t.pos+1)
	return 0
}
