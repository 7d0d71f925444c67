package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// UpdatePropertiesFile sets the keys of updates in the properties file at
// path (created with its directory when missing), keeping every other line
// as it was: comments, blank lines, keys rocketd does not know. A key's
// first definition is replaced in place by one "key=value" line, later
// duplicates are dropped, keys the file lacks are appended in sorted
// order. The new file is written beside the old one, synced, renamed over
// it and the directory synced, so a crash leaves the old or the new file,
// never a mix. (Java's Configuration.persist rewrites the whole file from
// its merged properties, losing comments.)
func UpdatePropertiesFile(path string, updates Properties) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("config: read %s: %w", path, err)
	}
	text := rewriteProperties(string(old), updates)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp := path + ".tmp"
	if err := writeSynced(tmp, []byte(text), mode); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("config: %w", err)
	}
	return syncDir(dir)
}

func writeSynced(path string, data []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("config: write %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	serr := d.Sync()
	cerr := d.Close()
	if err := errors.Join(serr, cerr); err != nil {
		return fmt.Errorf("config: sync %s: %w", dir, err)
	}
	return nil
}

// rewriteProperties is UpdatePropertiesFile's text transformation.
func rewriteProperties(text string, updates Properties) string {
	var out strings.Builder
	written := map[string]bool{}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
lines:
	for i := 0; i < len(lines); {
		// One logical line: the physical line and its continuations.
		j := i + 1
		body := strings.TrimRight(lines[i], "\r\n")
		trimmed := strings.TrimLeft(body, " \t\f")
		logical := trimmed
		if trimmed != "" && trimmed[0] != '#' && trimmed[0] != '!' {
			for endsWithOddBackslashes(body) && j < len(lines) {
				logical = logical[:len(logical)-1]
				body = strings.TrimRight(lines[j], "\r\n")
				logical += strings.TrimLeft(body, " \t\f")
				j++
			}
			one := Properties{}
			if parsePropertyLine(logical, one) == nil {
				for key := range one {
					if v, ok := updates[key]; ok {
						if !written[key] {
							out.WriteString(FormatProperty(key, v) + "\n")
							written[key] = true
						}
						i = j
						continue lines
					}
				}
			}
		}
		for _, l := range lines[i:j] {
			out.WriteString(l)
		}
		if j == len(lines) && !strings.HasSuffix(lines[j-1], "\n") {
			out.WriteString("\n")
		}
		i = j
	}
	for _, key := range slices.Sorted(maps.Keys(updates)) {
		if !written[key] {
			out.WriteString(FormatProperty(key, updates[key]) + "\n")
		}
	}
	return out.String()
}

// FormatProperty writes one "key=value" line that ParseProperties (and
// java.util.Properties) reads back as key and value.
func FormatProperty(key, value string) string {
	return escapeProperty(key, true) + "=" + escapeProperty(value, false)
}

func escapeProperty(s string, isKey bool) string {
	var b strings.Builder
	for i, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\f':
			b.WriteString(`\f`)
		case '=', ':', '#', '!':
			if isKey || i == 0 {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		case ' ':
			if isKey || i == 0 {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
