package meta

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

// switchInjector fails every sync while on.
type switchInjector struct {
	mu sync.Mutex
	on bool
}

func (s *switchInjector) set(on bool) { s.mu.Lock(); s.on = on; s.mu.Unlock() }

func (s *switchInjector) MaybeError(op vfs.Op) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on && op.Kind == vfs.OpSync {
		return vfs.ErrInjected
	}
	return nil
}

// A failed persist keeps the change in memory: admin calls get the error,
// send-path creations succeed (the topic is usable) and the next change
// writes the file.
func TestTopicsPersistFailure(t *testing.T) {
	mem := vfs.NewMem()
	inj := &switchInjector{}
	tp := openTopics(t, vfs.NewErrorFS(mem, inj), nil)
	inj.set(true)
	err := tp.Put(protocol.TopicConfig{TopicName: "A", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6})
	if !errors.Is(err, vfs.ErrInjected) || !tp.Contains("A") {
		t.Fatalf("Put on a failing disk: %v, in memory %v", err, tp.Contains("A"))
	}
	if _, err := tp.Delete("A"); !errors.Is(err, vfs.ErrInjected) || tp.Contains("A") {
		t.Fatalf("Delete on a failing disk: %v", err)
	}
	tc, created, err := tp.AutoCreate("B", AutoCreateTopic, 4, 0)
	if err != nil || !created || tc.TopicName != "B" {
		t.Fatalf("AutoCreate on a failing disk: %+v %v %v", tc, created, err)
	}
	inj.set(false)
	if _, _, err := tp.EnsureRetryTopic("g", 1); err != nil {
		t.Fatal(err)
	}
	reopened := openTopics(t, mem, nil)
	if !reopened.Contains("B") || !reopened.Contains("%RETRY%g") || reopened.Contains("A") {
		t.Fatalf("file after recovery: %v", reopened.Names())
	}
}

func TestOffsetsPersistFailureRetries(t *testing.T) {
	mem := vfs.NewMem()
	inj := &switchInjector{}
	o := openOffsets(t, vfs.NewErrorFS(mem, inj))
	o.Commit("g", "T", 0, 7)
	inj.set(true)
	if err := o.Persist(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("persist on a failing disk: %v", err)
	}
	inj.set(false)
	if err := o.Persist(); err != nil { // nothing changed since, but the last write failed
		t.Fatal(err)
	}
	if off, _ := openOffsets(t, mem).Query("g", "T", 0); off != 7 {
		t.Fatal("offset not written after the disk recovered")
	}
}

// Every change is in the file once its call returns, whatever the
// interleaving: a persist never overwrites a newer snapshot with an older
// one.
func TestConcurrentChangesAllPersisted(t *testing.T) {
	mem := vfs.NewMem()
	tp := openTopics(t, mem, nil)
	g := openGroups(t, mem, nil)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				name := fmt.Sprintf("W%d_%d", w, i)
				if err := tp.Put(protocol.TopicConfig{TopicName: name, ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}); err != nil {
					t.Error(err)
				}
				if _, ok := g.FindOrCreate(name); !ok {
					t.Error("group not created")
				}
			}
		}()
	}
	wg.Wait()
	tp2 := openTopics(t, mem.CrashClone(), nil)
	g2 := openGroups(t, mem.CrashClone(), nil)
	for w := range 4 {
		for i := range 5 {
			name := fmt.Sprintf("W%d_%d", w, i)
			if !tp2.Contains(name) {
				t.Errorf("topic %s lost", name)
			}
			if _, ok := g2.Get(name); !ok {
				t.Errorf("group %s lost", name)
			}
		}
	}
	if tp2.DataVersion() != tp.DataVersion() || g2.DataVersion() != g.DataVersion() {
		t.Fatal("file version differs from memory")
	}
}

// The change listener runs after the change is visible and written, so a
// re-registration it triggers sends the new table.
func TestOnChangeSeesTheChange(t *testing.T) {
	mem := vfs.NewMem()
	tp := openTopics(t, mem, nil)
	var seen []string
	tp.OnChange(func() {
		snap := tp.Snapshot()
		_, inSnap := snap.TopicConfigTable["NewTopic"]
		inFile := strings.Contains(readRaw(t, mem, filepath.Join(testDir, TopicsFile)), `"NewTopic"`)
		seen = append(seen, fmt.Sprintf("%v/%v", inSnap, inFile))
	})
	if _, _, err := tp.AutoCreate("NewTopic", AutoCreateTopic, 4, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := tp.Delete("NewTopic"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(seen, " ") != "true/true false/false" {
		t.Fatalf("listener saw %v", seen)
	}
}

// gateInjector holds the first sync until release is closed and counts
// renames (one per finished write).
type gateInjector struct {
	release chan struct{}
	mu      sync.Mutex
	held    bool
	renames int
}

func (g *gateInjector) MaybeError(op vfs.Op) error {
	g.mu.Lock()
	hold := op.Kind == vfs.OpSync && !g.held
	if hold {
		g.held = true
	}
	if op.Kind == vfs.OpRename {
		g.renames++
	}
	g.mu.Unlock()
	if hold {
		<-g.release
	}
	return nil
}

// TestPersistGroupCommit: changes that queue up behind a write in progress
// are written together by the next one.
func TestPersistGroupCommit(t *testing.T) {
	mem := vfs.NewMem()
	tp := openTopics(t, mem, nil)
	gate := &gateInjector{release: make(chan struct{})}
	tp.file.fs = vfs.NewErrorFS(mem, gate)

	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := tp.AutoCreate(fmt.Sprintf("G%d", i), AutoCreateTopic, 4, 0); err != nil {
				t.Error(err)
			}
		}()
	}
	// Wait until every creation asked for a persist: one write is held at
	// its first sync, the other seven wait behind it.
	wait.For(t, 10*time.Second, fmt.Sprintf("%d persists requested", n), func() bool { return tp.file.requested.Load() >= n })
	close(gate.release)
	wg.Wait()
	// The held write covers the changes made before its snapshot (at least
	// its own); one more write covers all the others.
	if gate.renames < 1 || gate.renames > 2 {
		t.Fatalf("%d writes for %d creations, want at most 2", gate.renames, n)
	}
	reopened := openTopics(t, mem.CrashClone(), nil)
	for i := range n {
		if !reopened.Contains(fmt.Sprintf("G%d", i)) {
			t.Fatalf("G%d not durable", i)
		}
	}
}
