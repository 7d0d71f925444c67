package filter

import (
	"math"
	"strconv"
	"strings"
)

// kind is the Java class of a value during evaluation: Java's filter works
// on Objects (Boolean, Integer, Long, Double, String, or null), and its
// comparison rules depend on the exact class.
type kind uint8

const (
	kNull kind = iota
	kBool
	kInt    // java.lang.Integer (literals that fit 32 bits)
	kLong   // java.lang.Long
	kDouble // java.lang.Double
	kString // every message property
)

// value is one evaluated operand. It is passed by value and its string
// aliases the property string or the compiled expression: evaluating does
// not allocate.
type value struct {
	k kind
	b bool
	n int64
	f float64
	s string
}

var (
	nullV  = value{}
	trueV  = value{k: kBool, b: true}
	falseV = value{k: kBool}
)

func boolV(b bool) value { return value{k: kBool, b: b} }

func (v value) isNumber() bool { return v.k == kInt || v.k == kLong || v.k == kDouble }

// javaEquals is Object.equals for the values above: same class and same
// value (Double by bits: NaN equals NaN, 0.0 differs from -0.0).
func javaEquals(a, b value) bool {
	if a.k != b.k {
		return false
	}
	switch a.k {
	case kNull:
		return true
	case kBool:
		return a.b == b.b
	case kInt, kLong:
		return a.n == b.n
	case kDouble:
		return math.Float64bits(a.f) == math.Float64bits(b.f) || (a.f != a.f && b.f != b.f)
	default:
		return a.s == b.s
	}
}

// compareValues is ComparisonExpression.__compare with
// convertStringExpressions on (SelectorParser.parse always sets it): the
// operands are converted up to a common class, then compareTo. ok is false
// where Java throws (a string that is not a number of the other side's
// class, or its Boolean-vs-String ClassCastException); Java's filter then
// drops the message.
func compareValues(lv, rv value) (cmp int, ok bool) {
	if lv.k == rv.k {
		return compareSame(lv, rv), true
	}
	switch lv.k {
	case kBool:
		if rv.k == kString {
			return 0, false // Java casts the Boolean to String: ClassCastException
		}
		return -1, true
	case kInt, kLong:
		switch rv.k {
		case kInt, kLong:
			return cmpInt(lv.n, rv.n), true
		case kDouble:
			return javaDoubleCompare(float64(lv.n), rv.f), true
		case kString:
			n, ok := parseJavaInt(rv.s, lv.k == kInt)
			if !ok {
				return 0, false
			}
			return cmpInt(lv.n, n), true
		}
		return -1, true
	case kDouble:
		switch rv.k {
		case kInt, kLong:
			return javaDoubleCompare(lv.f, float64(rv.n)), true
		case kString:
			f, ok := parseJavaDouble(rv.s)
			if !ok {
				return 0, false
			}
			return javaDoubleCompare(lv.f, f), true
		}
		return -1, true
	case kString:
		switch rv.k {
		case kBool:
			return compareSame(boolV(strings.EqualFold(lv.s, "true")), rv), true
		case kInt, kLong, kDouble:
			return compareStringNumber(lv.s, &rv)
		}
	}
	return -1, true
}

// compareStringNumber is compareValues of a string (a property) and a
// number: the string is parsed as the number's class.
func compareStringNumber(s string, num *value) (cmp int, ok bool) {
	if num.k == kDouble {
		f, ok := parseJavaDouble(s)
		if !ok {
			return 0, false
		}
		return javaDoubleCompare(f, num.f), true
	}
	n, ok := parseJavaInt(s, num.k == kInt)
	if !ok {
		return 0, false
	}
	return cmpInt(n, num.n), true
}

func compareSame(a, b value) int {
	switch a.k {
	case kBool:
		switch {
		case a.b == b.b:
			return 0
		case a.b:
			return 1
		}
		return -1
	case kInt, kLong:
		return cmpInt(a.n, b.n)
	case kDouble:
		return javaDoubleCompare(a.f, b.f)
	case kString:
		// Only equality and its sign's existence matter to callers;
		// for valid UTF-8 byte order agrees with Java's UTF-16 order
		// except around surrogates, which no caller depends on.
		return strings.Compare(a.s, b.s)
	}
	return 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// javaDoubleCompare is Double.compare: -0.0 < 0.0, NaN above everything
// and equal to itself.
func javaDoubleCompare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	ab, bb := int64(math.Float64bits(a)), int64(math.Float64bits(b))
	return cmpInt(ab, bb)
}

// parseJavaInt is Integer.valueOf (is32) or Long.valueOf: an optional sign
// and ASCII digits, no blanks, no overflow. (Java also takes other Unicode
// decimal digits; a property holding those fails here.)
func parseJavaInt(s string, is32 bool) (int64, bool) {
	if n, ok := smallDecimal(s); ok {
		return n, true // at most 9 digits: fits an Integer
	}
	body := s
	if len(body) > 0 && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	if body == "" {
		return 0, false
	}
	for i := 0; i < len(body); i++ {
		if !isDigit(body[i]) {
			return 0, false
		}
	}
	bits := 64
	if is32 {
		bits = 32
	}
	n, err := strconv.ParseInt(s, 10, bits)
	return n, err == nil
}

// parseJavaDouble is Double.valueOf(String): leading and trailing chars
// <= ' ' trimmed, an optional sign, "NaN", "Infinity", a decimal with
// optional fraction and exponent, or a hex float with a binary exponent,
// then an optional f/F/d/D suffix.
func parseJavaDouble(s string) (float64, bool) {
	if n, ok := smallDecimal(s); ok {
		return float64(n), true // exact: far below 2^53
	}
	s = trimJava(s)
	body := s
	neg := false
	if len(body) > 0 && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	switch body {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if n := len(body); n > 0 {
		switch body[n-1] {
		case 'f', 'F', 'd', 'D':
			body = body[:n-1]
		}
	}
	if !validJavaFloat(body) {
		return 0, false
	}
	f, err := strconv.ParseFloat(body, 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	if neg {
		f = -f
	}
	return f, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func trimJava(s string) string {
	for len(s) > 0 && s[0] <= ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] <= ' ' {
		s = s[:len(s)-1]
	}
	return s
}

// validJavaFloat checks the unsigned, suffix-less forms Java accepts, so
// that strconv's extras (underscores, "inf", hex without exponent) are not.
func validJavaFloat(s string) bool {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
		m := hexDigits(s)
		f := 0
		if m < len(s) && s[m] == '.' {
			f = hexDigits(s[m+1:])
			s = s[m+1+f:]
		} else {
			s = s[m:]
		}
		if m+f == 0 || len(s) == 0 || (s[0] != 'p' && s[0] != 'P') {
			return false
		}
		s = s[1:]
		if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
			s = s[1:]
		}
		return len(s) > 0 && digits(s) == len(s)
	}
	m := digits(s)
	rest := s[m:]
	f := 0
	if len(rest) > 0 && rest[0] == '.' {
		f = digits(rest[1:])
		rest = rest[1+f:]
	}
	if m+f == 0 {
		return false
	}
	if rest == "" {
		return true
	}
	return exponent(rest) == len(rest)
}

func hexDigits(s string) int {
	n := 0
	for n < len(s) && (isDigit(s[n]) || s[n] >= 'a' && s[n] <= 'f' || s[n] >= 'A' && s[n] <= 'F') {
		n++
	}
	return n
}

// smallDecimal is the fast path of the number parsers for the common
// property value: an optional '-' and 1 to 9 ASCII digits.
func smallDecimal(s string) (int64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	d := s
	if neg {
		d = s[1:]
	}
	if len(d) == 0 || len(d) > 9 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(d); i++ {
		c := d[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
