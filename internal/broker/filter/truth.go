package filter

// truth is the result of a boolean node: Java's three-valued logic plus the
// exception that aborts the whole evaluation. The boolean structure of an
// expression (AND, OR, NOT and the comparisons under them) is evaluated in
// truths, one byte per level, instead of the general values of eval.
type truth uint8

const (
	isFalse truth = iota
	isTrue
	isNull  // unknown: a missing property reached a comparison
	isAbort // Java throws; the message is dropped
)

func truthOf(b bool) truth {
	if b {
		return isTrue
	}
	return isFalse
}

// fastKind marks a comparison whose operands are a property and a
// constant, the usual shape, which test evaluates straight from the
// property's text. The node keeps its op, l and r (eval, the reference
// evaluator, ignores fastKind); n.n is then the property's slot, n.v the
// constant and n.cmp the comparison with the property on the left.
type fastKind uint8

const (
	fastNone    fastKind = iota
	fastEqStr            // prop = 'string'
	fastCmpNum           // prop op number (op is =, >, >=, <, <=)
	fastIsNull           // prop IS NULL
	fastStrTest          // prop [NOT] CONTAINS / STARTSWITH / ENDSWITH 'literal'
	fastIn               // prop [NOT] IN (...)
)

// specialise sets the fastKind of every node it can, after parsing.
func (e *Expr) specialise() {
	for i := range e.nodes {
		n := &e.nodes[i]
		switch n.op {
		case opEq:
			l, r := &e.nodes[n.l], &e.nodes[n.r]
			if l.op != opProp || r.op != opConst {
				break // 'x' = a is FALSE, not NULL, on a missing a: left to eval
			}
			switch {
			case r.v.k == kString:
				n.fast, n.n, n.v = fastEqStr, l.n, r.v
			case r.v.isNumber():
				n.fast, n.cmp, n.n, n.v = fastCmpNum, opEq, l.n, r.v
			}
		case opGt, opGe, opLt, opLe:
			l, r := &e.nodes[n.l], &e.nodes[n.r]
			o := n.op
			if l.op == opConst && r.op == opProp {
				// 5 < a is a > 5: compareValues and Double.compare are
				// antisymmetric, and a missing a is NULL on either side.
				l, r = r, l
				o = map[op]op{opGt: opLt, opGe: opLe, opLt: opGt, opLe: opGe}[o]
			}
			if l.op != opProp || r.op != opConst {
				break
			}
			if r.v.isNumber() { // the parser refuses other constants here
				n.fast, n.cmp, n.n, n.v = fastCmpNum, o, l.n, r.v
			}
		case opIsNull:
			if l := &e.nodes[n.l]; l.op == opProp {
				n.fast, n.n = fastIsNull, l.n
			}
		case opContains, opNotContains, opStarts, opNotStarts, opEnds, opNotEnds:
			if l := &e.nodes[n.l]; l.op == opProp {
				n.fast, n.n = fastStrTest, l.n
			}
		case opIn:
			if l := &e.nodes[n.l]; l.op == opProp { // the parser requires it
				n.fast, n.n = fastIn, l.n
			}
		}
	}
}

// test evaluates boolean node i (every node under AND, OR and NOT, and the
// root, is one: the parser casts a lone property with opCast).
func (e *Expr) test(i int32, en *env) truth {
	n := &e.nodes[i]
	switch n.fast {
	case fastEqStr:
		s, found := e.prop(en, n.n)
		if !found {
			return isNull
		}
		return truthOf(s == n.v.s)
	case fastCmpNum:
		s, found := e.prop(en, n.n)
		if !found {
			return isNull
		}
		c, ok := compareStringNumber(s, &n.v)
		if !ok {
			return isAbort
		}
		switch n.cmp {
		case opEq:
			return truthOf(c == 0)
		case opGt:
			return truthOf(c > 0)
		case opGe:
			return truthOf(c >= 0)
		case opLt:
			return truthOf(c < 0)
		}
		return truthOf(c <= 0)
	case fastIsNull:
		_, found := e.prop(en, n.n)
		return truthOf(!found)
	case fastStrTest:
		if n.v.s == "" {
			return isFalse
		}
		s, found := e.prop(en, n.n)
		return truthOf(found && stringTest(n.op, s, n.v.s))
	case fastIn:
		s, found := e.prop(en, n.n)
		if !found {
			return isNull
		}
		return truthOf(n.inList(s) != n.not)
	}
	switch n.op {
	case opAnd, opOr:
		stop := isFalse // the truth that decides alone
		if n.op == opOr {
			stop = isTrue
		}
		l := e.test(n.l, en)
		if l == stop || l == isAbort {
			return l
		}
		r := e.test(n.r, en)
		if r == stop || r == isAbort {
			return r
		}
		if l == isNull || r == isNull {
			return isNull
		}
		return isTrue - stop
	case opNot:
		switch t := e.test(n.l, en); t {
		case isTrue:
			return isFalse
		case isFalse:
			return isTrue
		default:
			return t
		}
	}
	v, ok := e.eval(i, en)
	switch {
	case !ok:
		return isAbort
	case v.k == kBool:
		return truthOf(v.b)
	}
	return isNull // a boolean node's value is a Boolean or null
}
