package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
)

// UnmarshalFastJSON decodes JSON as fastjson writes it into v with
// encoding/json semantics. On top of standard JSON it accepts what Java peers
// and Java-written config files contain (§4.1): unquoted integer keys
// ({0:250}), unquoted identifier keys, objects and arrays in key position
// (fastjson's MessageQueue keys, handed to v as their compact JSON text, so
// a key type implementing encoding.TextUnmarshaler can parse them), and the
// pretty format's tabs and newlines.
func UnmarshalFastJSON(data []byte, v any) error {
	std, err := NormalizeFastJSON(data)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(std, v); err != nil {
		return fmt.Errorf("protocol: fastjson: %w", err)
	}
	return nil
}

// ErrFastJSONSyntax marks text that is not JSON even by fastjson's rules.
var ErrFastJSONSyntax = errors.New("protocol: fastjson: syntax error")

// maxDecodeDepth bounds the normalizer's recursion on hostile input.
const maxDecodeDepth = 1000

// NormalizeFastJSON rewrites fastjson text as standard compact JSON: bare
// keys are quoted, a structured key becomes a string holding its compact
// JSON text, whitespace outside strings is dropped. Strings and numbers are
// copied as they are.
func NormalizeFastJSON(data []byte) ([]byte, error) {
	n := normalizer{in: data, out: make([]byte, 0, len(data)+len(data)/8)}
	n.skipSpace()
	if err := n.value(0); err != nil {
		return nil, err
	}
	n.skipSpace()
	if n.pos != len(n.in) {
		return nil, n.errorf("trailing data")
	}
	return n.out, nil
}

type normalizer struct {
	in  []byte
	pos int
	out []byte
}

func (n *normalizer) errorf(format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", ErrFastJSONSyntax, n.pos, fmt.Sprintf(format, args...))
}

func (n *normalizer) skipSpace() {
	for n.pos < len(n.in) {
		switch n.in[n.pos] {
		case ' ', '\t', '\n', '\r':
			n.pos++
		default:
			return
		}
	}
}

func (n *normalizer) value(depth int) error {
	if depth > maxDecodeDepth {
		return n.errorf("nesting deeper than %d", maxDecodeDepth)
	}
	if n.pos >= len(n.in) {
		return n.errorf("unexpected end of input")
	}
	switch c := n.in[n.pos]; {
	case c == '{':
		return n.object(depth)
	case c == '[':
		return n.array(depth)
	case c == '"':
		return n.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return n.number()
	case isIdentStart(c):
		lit := n.ident()
		switch lit {
		case "true", "false", "null":
			n.out = append(n.out, lit...)
			return nil
		}
		return n.errorf("unexpected literal %q", lit)
	default:
		return n.errorf("unexpected character %q", c)
	}
}

func (n *normalizer) object(depth int) error {
	n.pos++ // '{'
	n.out = append(n.out, '{')
	n.skipSpace()
	if n.pos < len(n.in) && n.in[n.pos] == '}' {
		n.pos++
		n.out = append(n.out, '}')
		return nil
	}
	for {
		n.skipSpace()
		if err := n.key(depth); err != nil {
			return err
		}
		n.skipSpace()
		if n.pos >= len(n.in) || n.in[n.pos] != ':' {
			return n.errorf("expected ':' after object key")
		}
		n.pos++
		n.out = append(n.out, ':')
		n.skipSpace()
		if err := n.value(depth + 1); err != nil {
			return err
		}
		n.skipSpace()
		if n.pos >= len(n.in) {
			return n.errorf("unterminated object")
		}
		switch n.in[n.pos] {
		case ',':
			n.pos++
			n.out = append(n.out, ',')
		case '}':
			n.pos++
			n.out = append(n.out, '}')
			return nil
		default:
			return n.errorf("expected ',' or '}' in object")
		}
	}
}

// key writes an object key as a standard JSON string.
func (n *normalizer) key(depth int) error {
	if n.pos >= len(n.in) {
		return n.errorf("unexpected end of input in object")
	}
	switch c := n.in[n.pos]; {
	case c == '"':
		return n.str()
	case c == '-' || (c >= '0' && c <= '9'):
		start := len(n.out)
		if err := n.number(); err != nil {
			return err
		}
		n.out = append(n.out, '"')
		copy(n.out[start+1:], n.out[start:len(n.out)-1])
		n.out[start] = '"'
		n.out = append(n.out, '"')
		return nil
	case c == '{' || c == '[':
		// A bean key: normalize it on its own, then quote its text.
		sub := normalizer{in: n.in, pos: n.pos}
		if err := sub.value(depth + 1); err != nil {
			return err
		}
		n.pos = sub.pos
		n.out = appendFastJSONString(n.out, string(sub.out), JSONLegacy)
		return nil
	case isIdentStart(c):
		id := n.ident()
		n.out = append(n.out, '"')
		n.out = append(n.out, id...)
		n.out = append(n.out, '"')
		return nil
	default:
		return n.errorf("unexpected character %q as object key", c)
	}
}

func (n *normalizer) array(depth int) error {
	n.pos++ // '['
	n.out = append(n.out, '[')
	n.skipSpace()
	if n.pos < len(n.in) && n.in[n.pos] == ']' {
		n.pos++
		n.out = append(n.out, ']')
		return nil
	}
	for {
		n.skipSpace()
		if err := n.value(depth + 1); err != nil {
			return err
		}
		n.skipSpace()
		if n.pos >= len(n.in) {
			return n.errorf("unterminated array")
		}
		switch n.in[n.pos] {
		case ',':
			n.pos++
			n.out = append(n.out, ',')
		case ']':
			n.pos++
			n.out = append(n.out, ']')
			return nil
		default:
			return n.errorf("expected ',' or ']' in array")
		}
	}
}

// str copies a double-quoted string verbatim; encoding/json validates its
// escapes afterwards.
func (n *normalizer) str() error {
	start := n.pos
	n.pos++
	for n.pos < len(n.in) {
		switch n.in[n.pos] {
		case '\\':
			n.pos += 2
		case '"':
			n.pos++
			n.out = append(n.out, n.in[start:n.pos]...)
			return nil
		default:
			n.pos++
		}
	}
	n.pos = len(n.in)
	return n.errorf("unterminated string")
}

// number copies a number token; encoding/json checks its grammar.
func (n *normalizer) number() error {
	start := n.pos
	for n.pos < len(n.in) {
		c := n.in[n.pos]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			n.pos++
			continue
		}
		break
	}
	if n.pos == start || (n.pos == start+1 && n.in[start] == '-') {
		return n.errorf("malformed number")
	}
	n.out = append(n.out, n.in[start:n.pos]...)
	return nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func (n *normalizer) ident() string {
	start := n.pos
	for n.pos < len(n.in) {
		c := n.in[n.pos]
		if isIdentStart(c) || (c >= '0' && c <= '9') {
			n.pos++
			continue
		}
		break
	}
	return string(n.in[start:n.pos])
}
