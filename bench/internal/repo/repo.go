// Package repo finds the rocketd repository the bench programs run in
// (they build rocketd from it and write their results below it).
package repo

import (
	"fmt"
	"os"
	"path/filepath"
)

// Root returns the nearest directory at or above the working directory
// that holds go.mod and cmd/rocketd.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(d, "cmd", "rocketd")); err == nil {
				return d, nil
			}
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("run from inside the rocketd repository (no go.mod with cmd/rocketd above %s)", dir)
		}
	}
}
