package proc

import (
	"os/exec"
	"testing"
)

// RerunWithoutRace runs t's test again, alone, in a build of its package
// without the race detector, and fails t with its output if that run
// fails. Tests of the official Go client call it under -race: the
// client's own goroutines race with each other (see race_on_test.go in
// internal/broker), which no change of ours can fix.
func RerunWithoutRace(t *testing.T) {
	t.Helper()
	out, err := exec.Command("go", "test", "-count=1", "-run", "^"+t.Name()+"$", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("test without -race: %v\n%s", err, out)
	}
}
