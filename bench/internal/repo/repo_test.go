package repo

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRootFindsTheRepository(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "rocketd")); err != nil {
		t.Fatalf("Root() = %s: %v", root, err)
	}
	t.Chdir(t.TempDir())
	if r, err := Root(); err == nil {
		t.Fatalf("Root() outside the repository = %s, want an error", r)
	}
}
