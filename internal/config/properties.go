package config

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrMalformedEscape reports a \uXXXX escape that is not four hex digits.
var ErrMalformedEscape = errors.New("config: malformed \\uxxxx escape")

// Properties is a parsed Java properties file: key -> value. When a key
// appears more than once the last value wins, as in java.util.Properties.
type Properties map[string]string

// ParseProperties reads the java.util.Properties text format used by
// broker.conf and namesrv.conf files:
//
//   - a line whose first non-blank character is '#' or '!' is a comment
//     (comments are whole lines only; "a=b # c" has the value "b # c");
//   - the key ends at the first unescaped '=', ':' or blank; blanks around
//     the separator are skipped, and a blank alone also separates;
//   - a line ending in an odd number of backslashes continues on the next
//     line, whose leading blanks are dropped;
//   - escapes \t \n \r \f and \uXXXX are decoded, a backslash before any
//     other character stands for that character;
//   - the value keeps its trailing blanks (Java does too).
//
// Input is read as UTF-8 (Java 9+ reads .properties as UTF-8 too when loaded
// through a Reader, which is what RocketMQ does).
func ParseProperties(r io.Reader) (Properties, error) {
	props := Properties{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	lineNo := 0
	var logical strings.Builder
	startLine := 0
	continuing := false
	for sc.Scan() {
		lineNo++
		line := strings.TrimSuffix(sc.Text(), "\r")
		if continuing {
			line = strings.TrimLeft(line, " \t\f")
		} else {
			trimmed := strings.TrimLeft(line, " \t\f")
			if trimmed == "" || trimmed[0] == '#' || trimmed[0] == '!' {
				continue
			}
			line = trimmed
			startLine = lineNo
			logical.Reset()
		}
		if endsWithOddBackslashes(line) {
			logical.WriteString(line[:len(line)-1])
			continuing = true
			continue
		}
		logical.WriteString(line)
		continuing = false
		if err := parsePropertyLine(logical.String(), props); err != nil {
			return nil, fmt.Errorf("config: line %d: %w", startLine, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("config: read properties: %w", err)
	}
	if continuing {
		// Java keeps a dangling continuation as the end of the value.
		if err := parsePropertyLine(logical.String(), props); err != nil {
			return nil, fmt.Errorf("config: line %d: %w", startLine, err)
		}
	}
	return props, nil
}

// LoadPropertiesFile parses the properties file at path.
func LoadPropertiesFile(path string) (Properties, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: open %s: %w", path, err)
	}
	defer f.Close()
	p, err := ParseProperties(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

func endsWithOddBackslashes(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

func isPropBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// parsePropertyLine splits one logical line (leading blanks removed,
// continuations joined) into key and value and stores them.
func parsePropertyLine(line string, props Properties) error {
	keyEnd := len(line)
	valStart := len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++ // the escaped character is part of the key
			continue
		}
		if c == '=' || c == ':' {
			keyEnd, valStart = i, i+1
			break
		}
		if isPropBlank(c) {
			keyEnd = i
			j := i
			for j < len(line) && isPropBlank(line[j]) {
				j++
			}
			if j < len(line) && (line[j] == '=' || line[j] == ':') {
				j++
			}
			valStart = j
			break
		}
	}
	for valStart < len(line) && isPropBlank(line[valStart]) {
		valStart++
	}
	key, err := unescapeProperty(line[:keyEnd])
	if err != nil {
		return err
	}
	val, err := unescapeProperty(line[min(valStart, len(line)):])
	if err != nil {
		return err
	}
	props[key] = val
	return nil
}

func unescapeProperty(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i == len(s) {
			break // a lone trailing backslash is dropped, as in Java
		}
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			r, err := hex4(s, i+1)
			if err != nil {
				return "", err
			}
			i += 4
			// Java strings are UTF-16: a surrogate pair arrives as two escapes.
			if utf16.IsSurrogate(r) && strings.HasPrefix(s[i+1:], `\u`) {
				if lo, err := hex4(s, i+3); err == nil {
					if pair := utf16.DecodeRune(r, lo); pair != utf8.RuneError {
						r = pair
						i += 6
					}
				}
			}
			b.WriteRune(r)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// hex4 decodes the four hex digits of a \uXXXX escape starting at s[at].
func hex4(s string, at int) (rune, error) {
	if at+4 > len(s) {
		return 0, fmt.Errorf("%w in %q", ErrMalformedEscape, s)
	}
	var r rune
	for _, h := range []byte(s[at : at+4]) {
		var d byte
		switch {
		case h >= '0' && h <= '9':
			d = h - '0'
		case h >= 'a' && h <= 'f':
			d = h - 'a' + 10
		case h >= 'A' && h <= 'F':
			d = h - 'A' + 10
		default:
			return 0, fmt.Errorf("%w in %q", ErrMalformedEscape, s)
		}
		r = r<<4 | rune(d)
	}
	return r, nil
}
