package meta

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rocketd/rocketd/internal/protocol"
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
