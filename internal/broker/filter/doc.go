// Package filter is the SQL92 message filter of Apache RocketMQ
// (ExpressionType.SQL92): the language of Java's filter module
// (SelectorParser.jj and the expression classes) compiled once per
// subscription version and evaluated over a message's property string
// without allocating.
//
// The language, as Java 5.x accepts it:
//   - literals: 'string' (” is a quote), decimal integers ("0" or no
//     leading zero, optional L suffix; Integer when they fit 32 bits, else
//     Long), floating point (5.5, 5., .5, 5E10; a literal of 0.0 or one that
//     rounds to zero is refused, as Java's createFloat does), TRUE, FALSE,
//     NULL; keywords are case-insensitive; identifiers are
//     [A-Za-z_$][A-Za-z0-9_$]* and name message properties (TAGS, KEYS and
//     user properties alike: Java evaluates over the decoded property map);
//   - =, <>, >, >=, <, <=, [NOT] BETWEEN x AND y, [NOT] IN ('a', ...),
//     IS [NOT] NULL, [NOT] CONTAINS / STARTSWITH / ENDSWITH 'literal',
//     AND, OR, NOT, unary + and -, parentheses, -- line comments (which
//     need their line end) and /* block comments */.
//
// Evaluation follows Java's classes exactly: three-valued logic with NULL
// for a missing property; property values are strings; comparing a string
// with a number parses the string as that number's class (Integer, Long or
// Double), and a string that does not parse aborts the whole evaluation
// (Java throws, and its broker then drops the message); two strings are
// ordered as doubles or abort; = between strings is exact; a string equals
// TRUE when it is "true" in any case; CONTAINS and its kin are FALSE, never
// NULL, on a missing property or an empty search. A message matches only
// when the result is TRUE.
//
// Java's parser quirks are kept: it stops after the first complete
// expression and ignores what follows ("a = 6 b = 1" is "a = 6"), and its
// lazy token manager reports a lexical error only if the parser reaches it.
// Differences, on purpose: nesting deeper than 200 levels or more than
// 10000 operations is refused (Java has no bound); a property holding
// non-ASCII Unicode digits (which Java's Integer.valueOf accepts) does not
// parse as a number here.
//
// How Match evaluates (all without allocating): the first property read
// scans the property string once, entry by entry, for the values of the
// expression's first 8 property names (names past 8 are searched for at
// each read). The boolean structure (AND, OR, NOT) is walked in one-byte
// truths: TRUE, FALSE, NULL and abort. A comparison of a property with a
// constant (prop = 'x', prop > 5, 5 < prop, IS NULL, IN, CONTAINS and its
// kin), marked when compiling, is decided straight from the property's
// text; anything else falls back to eval, the general walk over Java's
// value classes. eval alone, with a per-name search, is the reference
// evaluation: FuzzCompile requires Match's verdict to equal it, and
// TestJavaDifferential holds both to Java's table.
//
// Cost (`go test -run '^$' -bench Match -count 4 ./internal/broker/filter/`,
// 0 allocs/op, an otherwise idle 2-core VM, 2026-12-02): `a > 5 AND b = 'x'`
// over a typical producer's 130-byte property string (BenchmarkMatch/gt_and_eq)
// 51.7-56.1 ns, over a and b alone 25.3-25.7 ns; the other shapes of
// BenchmarkMatch 40-58 ns. Under heavy load the same runs read 2-3x that.
//
// MayMatchTagsCode is a pre-check on the ConsumeQueue unit's tags code for
// expressions that require TAGS = 'x' or TAGS IN (...); Java has none (it
// passes every unit unless a bloom filter is configured).
//
// testdata/sql92_java.txt holds Java's verdicts for sql92_exprs.txt over
// sql92_props.txt (T, F, N for NULL, X for an exception, P for a refused
// expression), written by testdata/java/SqlFilterTable.java against
// rocketmq-filter-5.2.0 (testdata/gen-java-table.sh).
package filter
