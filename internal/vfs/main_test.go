package vfs

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if name := os.Getenv(javaLockChildEnv); name != "" {
		javaLockChild(name) // never returns
	}
	goleak.VerifyTestMain(m)
}
