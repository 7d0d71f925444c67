package filter

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// op is the operation of one node of a compiled expression. Each mirrors
// one Java expression class of the filter module, with its evaluate rules.
type op uint8

const (
	opConst       op = iota // ConstantExpression / BooleanConstantExpression
	opProp                  // PropertyExpression: v.s is the name
	opNeg                   // UnaryExpression.createNegate
	opCast                  // UnaryExpression.createBooleanCast
	opNot                   // UnaryExpression.createNOT
	opAnd                   // LogicExpression.createAND
	opOr                    // LogicExpression.createOR
	opEq                    // doCreateEqual (<> is NOT over it)
	opIsNull                // doCreateEqual(left, NULL)
	opGt                    // createGreaterThan
	opGe                    // createGreaterThanEqual
	opLt                    // createLessThan
	opLe                    // createLessThanEqual
	opContains              // ContainsExpression: v.s is the search
	opNotContains           // NotContainsExpression
	opStarts                // StartsWithExpression
	opNotStarts             // NotStartsWithExpression
	opEnds                  // EndsWithExpression
	opNotEnds               // NotEndsWithExpression
	opIn                    // UnaryInExpression
)

// node is one operation; children are indexes into Expr.nodes.
type node struct {
	op   op
	n    int // opProp: index in Expr.names
	l, r int32
	v    value
	in   []string            // IN list, fewer than 5 entries
	set  map[string]struct{} // IN list of 5 or more (Java uses a HashSet)
	not  bool                // NOT IN
	fast fastKind            // set by specialise: see test
	cmp  op                  // fastCmpNum: the comparison, property on the left
}

// Expr is a compiled SQL92 expression. It is immutable and safe for
// concurrent use; Match does not allocate.
type Expr struct {
	nodes   []node
	root    int32
	text    string
	names   []string // the property names it reads; opProp's n indexes them
	needles []string // "\x02"+name+"\x01" for each name
	// firsts has bit c set when one of the first maxSlots names starts
	// with byte c: scan compares names only with entries starting so.
	firsts [4]uint64
	// tagsBound: a TRUE result needs TAGS hashing to one of tagCodes.
	tagsBound bool
	tagCodes  []int32
}

// Match evaluates the expression over a message's property string
// (name\x01value\x02 entries, message.Property rules: the last entry of a
// name wins, a missing name is NULL). Like Java's ExpressionMessageFilter it
// is true only for a TRUE result: NULL (unknown), FALSE and any evaluation
// Java would abort with an exception all drop the message.
func (e *Expr) Match(props string) bool {
	en := env{props: props}
	return e.test(e.root, &en) == isTrue
}

// evalProps is the reference evaluation: the general value of every node,
// fastKind ignored. The fuzz test holds test to it.
func (e *Expr) evalProps(props string) (value, bool) {
	en := env{props: props, direct: true}
	return e.eval(e.root, &en)
}

// operand evaluates a comparison's operand: constants and properties (the
// usual operands) without a recursive call.
func (e *Expr) operand(i int32, en *env) (value, bool) {
	n := &e.nodes[i]
	switch n.op {
	case opConst:
		return n.v, true
	case opProp:
		s, found := e.prop(en, n.n)
		if !found {
			return nullV, true
		}
		return value{k: kString, s: s}, true
	}
	return e.eval(i, en)
}

// eval returns the node's value; ok is false where Java's evaluate throws,
// which aborts the whole evaluation.
func (e *Expr) eval(i int32, props *env) (value, bool) {
	n := &e.nodes[i]
	switch n.op {
	case opConst:
		return n.v, true
	case opProp:
		s, found := e.prop(props, n.n)
		if !found {
			return nullV, true
		}
		return value{k: kString, s: s}, true
	case opNeg:
		v, ok := e.eval(n.l, props)
		if !ok {
			return v, false
		}
		switch v.k {
		case kInt:
			return value{k: kInt, n: int64(-int32(v.n))}, true
		case kLong:
			return value{k: kLong, n: -v.n}, true
		case kDouble:
			return value{k: kDouble, f: -v.f}, true
		}
		return nullV, true
	case opCast:
		v, ok := e.eval(n.l, props)
		if !ok || v.k == kNull || v.k == kBool {
			return v, ok
		}
		return falseV, true
	case opNot:
		v, ok := e.eval(n.l, props)
		if !ok || v.k != kBool {
			return v, ok
		}
		return boolV(!v.b), true
	case opAnd, opOr:
		stop := n.op == opOr // the value that decides alone
		lv, ok := e.eval(n.l, props)
		if !ok {
			return lv, false
		}
		if lv.k == kBool && lv.b == stop {
			return lv, true
		}
		rv, ok := e.eval(n.r, props)
		if !ok {
			return rv, false
		}
		if rv.k == kBool && rv.b == stop {
			return rv, true
		}
		if lv.k == kNull || rv.k == kNull {
			return nullV, true
		}
		return boolV(!stop), true
	case opEq:
		lv, ok := e.operand(n.l, props)
		if !ok {
			return lv, false
		}
		rv, ok := e.operand(n.r, props)
		if !ok {
			return rv, false
		}
		if (lv.k == kNull) != (rv.k == kNull) {
			if lv.k == kNull {
				return nullV, true
			}
			return falseV, true
		}
		if javaEquals(lv, rv) {
			return trueV, true
		}
		c, ok := compareValues(lv, rv)
		return boolV(c == 0), ok
	case opIsNull:
		v, ok := e.operand(n.l, props)
		return boolV(v.k == kNull), ok
	case opGt, opGe, opLt, opLe:
		lv, ok := e.operand(n.l, props)
		if !ok || lv.k == kNull {
			return lv, ok
		}
		rv, ok := e.operand(n.r, props)
		if !ok || rv.k == kNull {
			return rv, ok
		}
		var c int
		if lv.k == kString && rv.k == kString {
			// Two strings compare as doubles or not at all.
			lf, lok := parseJavaDouble(lv.s)
			rf, rok := parseJavaDouble(rv.s)
			if !lok || !rok {
				return nullV, false
			}
			c = javaDoubleCompare(lf, rf)
		} else if c, ok = compareValues(lv, rv); !ok {
			return nullV, false
		}
		switch n.op {
		case opGt:
			return boolV(c > 0), true
		case opGe:
			return boolV(c >= 0), true
		case opLt:
			return boolV(c < 0), true
		}
		return boolV(c <= 0), true
	case opContains, opNotContains, opStarts, opNotStarts, opEnds, opNotEnds:
		if n.v.s == "" {
			return falseV, true
		}
		v, ok := e.operand(n.l, props)
		if !ok {
			return v, false
		}
		if v.k != kString {
			return falseV, true
		}
		return boolV(stringTest(n.op, v.s, n.v.s)), true
	case opIn:
		v, ok := e.operand(n.l, props)
		if !ok || v.k != kString {
			return nullV, ok
		}
		return boolV(n.inList(v.s) != n.not), true
	}
	return nullV, false
}

// inList tells whether s is one of an IN node's strings.
func (n *node) inList(s string) bool {
	if n.set != nil {
		_, found := n.set[s]
		return found
	}
	for _, t := range n.in {
		if t == s {
			return true
		}
	}
	return false
}

func stringTest(o op, s, search string) bool {
	switch o {
	case opContains:
		return strings.Contains(s, search)
	case opNotContains:
		return !strings.Contains(s, search)
	case opStarts:
		return len(s) >= len(search) && s[:len(search)] == search
	case opNotStarts:
		return !(len(s) >= len(search) && s[:len(search)] == search)
	case opEnds:
		return len(s) >= len(search) && s[len(s)-len(search):] == search
	}
	return !(len(s) >= len(search) && s[len(s)-len(search):] == search)
}

// isBoolean tells whether node i is one of Java's BooleanExpressions.
func (e *Expr) isBoolean(i int32) bool {
	n := &e.nodes[i]
	switch n.op {
	case opConst:
		return n.v.k == kBool || n.v.k == kNull
	case opProp, opNeg:
		return false
	}
	return true
}

// constantText renders a constant the way Java's toString does, for
// error messages.
func constantText(v value) string {
	switch v.k {
	case kNull:
		return "NULL"
	case kBool:
		if v.b {
			return "TRUE"
		}
		return "FALSE"
	case kInt, kLong:
		return strconv.FormatInt(v.n, 10)
	case kDouble:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	}
	return fmt.Sprintf("'%s'", v.s)
}

// parseDecimal is ConstantExpression.createFromDecimal.
func parseDecimal(text string) (value, error) {
	if n := len(text); text[n-1] == 'l' || text[n-1] == 'L' {
		text = text[:n-1]
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return nullV, fmt.Errorf("number %s out of range of a long", text)
	}
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		return value{k: kInt, n: n}, nil
	}
	return value{k: kLong, n: n}, nil
}

// parseFloatLiteral is ConstantExpression.createFloat: Java refuses a
// literal above Double.MAX_VALUE or below Double.MIN_VALUE, which makes 0.0
// itself (and any literal that rounds to zero) an error.
func parseFloatLiteral(text string) (value, error) {
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !isRangeErr(err) {
		return nullV, fmt.Errorf("bad number %s", text)
	}
	if f > math.MaxFloat64 {
		return nullV, fmt.Errorf("%s is greater than %v", text, math.MaxFloat64)
	}
	if f < math.SmallestNonzeroFloat64 {
		return nullV, fmt.Errorf("%s is less than %v", text, math.SmallestNonzeroFloat64)
	}
	return value{k: kDouble, f: f}, nil
}
