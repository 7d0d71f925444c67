package store

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

// cqCountingFS is a MemFS whose ConsumeQueue files are kept compactly (a
// MemFS page is 4 KiB, so 100,000 queue files of one unit would take about
// 800 MiB) and whose open ConsumeQueue descriptors are counted. Directories,
// names and everything else stay in the MemFS: a queue file is a name
// there (an empty placeholder, so List and RemoveAll see it) plus its
// content here. There is no crash model for queue files: tests using it
// restart cleanly.
type cqCountingFS struct {
	*vfs.MemFS

	mu    sync.Mutex
	files map[string]*compactData
	open  int // ConsumeQueue descriptors open now
	peak  int
	opens int
}

type compactData struct {
	size int64
	data []byte // the bytes up to the last written one; the rest reads as zeros
}

func newCQCountingFS() *cqCountingFS {
	return &cqCountingFS{MemFS: vfs.NewMem(), files: map[string]*compactData{}}
}

func isQueueFile(name string) bool {
	return strings.Contains(name, "/"+"consumequeue/") && len(filepath.Base(name)) == 20
}

func (c *cqCountingFS) Peak() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peak
}

func (c *cqCountingFS) OpenNow() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

func (c *cqCountingFS) handle(name string, d *compactData) vfs.File {
	c.open++
	c.opens++
	c.peak = max(c.peak, c.open)
	return &compactFile{fs: c, name: name, d: d}
}

func (c *cqCountingFS) Create(name string) (vfs.File, error) {
	if !isQueueFile(name) {
		return c.MemFS.Create(name)
	}
	f, err := c.MemFS.Create(name)
	if err != nil {
		return nil, err
	}
	f.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	d := &compactData{}
	c.files[filepath.Clean(name)] = d
	return c.handle(name, d), nil
}

func (c *cqCountingFS) OpenReadWrite(name string) (vfs.File, error) {
	if !isQueueFile(name) {
		return c.MemFS.OpenReadWrite(name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.files[filepath.Clean(name)]
	if d == nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
	return c.handle(name, d), nil
}

func (c *cqCountingFS) Open(name string) (vfs.File, error) {
	if isQueueFile(name) {
		return c.OpenReadWrite(name)
	}
	return c.MemFS.Open(name)
}

type sizedInfo struct {
	os.FileInfo
	size int64
}

func (s sizedInfo) Size() int64 { return s.size }

func (c *cqCountingFS) Stat(name string) (os.FileInfo, error) {
	fi, err := c.MemFS.Stat(name)
	if err != nil || !isQueueFile(name) {
		return fi, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.files[filepath.Clean(name)]; d != nil {
		return sizedInfo{fi, d.size}, nil
	}
	return fi, nil
}

func (c *cqCountingFS) Remove(name string) error {
	if err := c.MemFS.Remove(name); err != nil {
		return err
	}
	c.mu.Lock()
	delete(c.files, filepath.Clean(name))
	c.mu.Unlock()
	return nil
}

// SyncDir of a ConsumeQueue directory does nothing: there is no crash
// model for queues here, and MemFS's SyncDir copies the directory's
// entries, which with 25,000 topic directories makes creating queues
// quadratic.
func (c *cqCountingFS) SyncDir(dir string) error {
	if strings.Contains(dir+"/", "/consumequeue/") {
		return nil
	}
	return c.MemFS.SyncDir(dir)
}

func (c *cqCountingFS) RemoveAll(name string) error {
	if err := c.MemFS.RemoveAll(name); err != nil {
		return err
	}
	prefix := filepath.Clean(name) + "/"
	c.mu.Lock()
	for p := range c.files {
		if strings.HasPrefix(p, prefix) {
			delete(c.files, p)
		}
	}
	c.mu.Unlock()
	return nil
}

// compactFile is an open ConsumeQueue file of a cqCountingFS.
type compactFile struct {
	fs     *cqCountingFS
	name   string
	d      *compactData
	closed bool // guarded by fs.mu
}

func (f *compactFile) Name() string { return f.name }

func (f *compactFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, os.ErrClosed
	}
	if off >= f.d.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), f.d.size-off))
	clear(p[:n])
	if off < int64(len(f.d.data)) {
		copy(p[:n], f.d.data[off:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *compactFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, os.ErrClosed
	}
	end := off + int64(len(p))
	if allZero(p) {
		// Zero-filling reads back the same from the sparse tail.
		end = min(end, int64(len(f.d.data)))
		if off < end {
			clear(f.d.data[off:end])
		}
	} else {
		if end > int64(len(f.d.data)) {
			f.d.data = append(f.d.data, make([]byte, end-int64(len(f.d.data)))...)
		}
		copy(f.d.data[off:], p)
	}
	f.d.size = max(f.d.size, off+int64(len(p)))
	return len(p), nil
}

func allZero(p []byte) bool {
	for _, b := range p {
		if b != 0 {
			return false
		}
	}
	return true
}

func (f *compactFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	f.d.size = size
	if int64(len(f.d.data)) > size {
		f.d.data = f.d.data[:size]
	}
	return nil
}

func (f *compactFile) Size() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	return f.d.size, nil
}

func (f *compactFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	return nil
}

func (f *compactFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	f.closed = true
	f.fs.open--
	return nil
}

// waitDispatchedWithin is waitDispatched with a longer deadline, for a
// workload that takes seconds on a loaded machine.
func waitDispatchedWithin(t *testing.T, s *Store, d time.Duration) {
	t.Helper()
	wait.For(t, d, "dispatch", func() bool { return s.DispatchedOffset() >= s.CommitLogMaxOffset() })
}

// getOne pulls the message at offset of a queue and checks its body.
func getOne(t *testing.T, s *Store, topic string, queueID int32, offset int64, body []byte) {
	t.Helper()
	r, err := s.GetMessage("g", topic, queueID, offset, 1, nil)
	if err != nil {
		t.Fatalf("get %s/%d@%d: %v", topic, queueID, offset, err)
	}
	defer r.Release()
	if r.Status != Found || len(r.Messages) != 1 {
		t.Fatalf("get %s/%d@%d: %s, %d messages", topic, queueID, offset, r.Status, len(r.Messages))
	}
	rec, _, err := message.DecodeRecord(r.Messages[0].Bytes, true)
	if err != nil || !bytes.Equal(rec.Body, body) {
		t.Fatalf("get %s/%d@%d: body %q, %v", topic, queueID, offset, rec.Body, err)
	}
}

// TestHundredThousandQueuesFewDescriptors is the report of issue 12 item 5
// turned around: 100,000 queues (25,000 topics of 4) with a cap of 64 open
// ConsumeQueue files. Sends, dispatch, pulls, a restart (recovery of every
// queue) and sends and pulls after it all work, and no more than 64 queue
// files are ever open at once.
func TestHundredThousandQueuesFewDescriptors(t *testing.T) {
	const perTopic, capacity = 4, 64
	topics := 25_000
	if raceEnabled {
		// The race detector makes every operation ~10x slower; 10,000
		// queues still outnumber the cap 150 times.
		topics = 2_500
	}
	fsys := newCQCountingFS()
	cfg := testConfig(fsys)
	cfg.SegmentSize = 4 << 20
	cfg.MaxOpenCQFiles = capacity
	// Evictions sync the queue files; the flusher's periodic walk over
	// 100,000 queues would only slow the test down.
	cfg.CQFlushInterval = time.Hour
	topic := func(i int) string { return fmt.Sprintf("T%05d", i) }
	body := func(i, q int, round int) []byte { return []byte(fmt.Sprintf("%s/%d #%d", topic(i), q, round)) }

	start := time.Now()
	s := openStore(t, cfg)
	for i := 0; i < topics; i++ {
		for q := 0; q < perTopic; q++ {
			put(t, s, newRecord(topic(i), int32(q), body(i, q, 0), nil))
		}
	}
	waitDispatchedWithin(t, s, time.Minute)
	sent := time.Since(start)
	for i := 0; i < topics; i += 101 {
		for q := 0; q < perTopic; q++ {
			getOne(t, s, topic(i), int32(q), 0, body(i, q, 0))
		}
	}
	if peak, st := fsys.Peak(), s.files.Stats(); peak > capacity || st.PeakOpen > capacity || st.Evictions == 0 {
		t.Fatalf("before restart: %d queue files open at most (cache %+v), cap %d", peak, st, capacity)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := fsys.OpenNow(); n != 0 {
		t.Fatalf("%d queue files open after Close", n)
	}

	start = time.Now()
	s = openStore(t, cfg)
	restart := time.Since(start)
	if !s.LastExitOK() {
		t.Fatal("clean shutdown not seen")
	}
	for i := 0; i < topics; i++ {
		for q := 0; q < perTopic; q++ {
			if got := s.MaxOffset(topic(i), int32(q)); got != 1 {
				t.Fatalf("%s/%d: max offset %d after restart, want 1", topic(i), q, got)
			}
		}
	}
	for i := 50; i < topics; i += 101 {
		for q := 0; q < perTopic; q++ {
			getOne(t, s, topic(i), int32(q), 0, body(i, q, 0))
			if res := put(t, s, newRecord(topic(i), int32(q), body(i, q, 1), nil)); res.QueueOffset != 1 {
				t.Fatalf("%s/%d: queue offset %d after restart, want 1", topic(i), q, res.QueueOffset)
			}
		}
	}
	waitDispatchedWithin(t, s, time.Minute)
	for i := 50; i < topics; i += 101 {
		getOne(t, s, topic(i), 3, 1, body(i, 3, 1))
	}
	if peak := fsys.Peak(); peak > capacity {
		t.Fatalf("after restart: %d queue files open at most, cap %d", peak, capacity)
	}
	t.Logf("%d queues, cap %d: sends+dispatch %v, restart %v, cache %+v", topics*perTopic, capacity, sent, restart, s.files.Stats())
}

// TestQueueWriteFailureRefusesPutsUntilResolved: when dispatch cannot write
// a ConsumeQueue unit (EMFILE creating a queue file, ENOSPC writing one),
// puts are refused with SERVICE_NOT_AVAILABLE and a reason naming the
// error; once the writes work again dispatch resumes by itself, puts are
// accepted, and every acknowledged message — those acknowledged before
// dispatch reached the failure included — is readable.
func TestQueueWriteFailureRefusesPutsUntilResolved(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind vfs.OpKind
		err  error
	}{
		{"EMFILE on create", vfs.OpCreate, syscall.EMFILE},
		{"ENOSPC on write", vfs.OpWrite, syscall.ENOSPC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var failing atomic.Bool
			efs := vfs.NewErrorFS(vfs.NewMem(), vfs.InjectorFunc(func(op vfs.Op) error {
				if failing.Load() && op.Kind == tc.kind && strings.Contains(op.Path, "/consumequeue/") {
					return tc.err
				}
				return nil
			}))
			s := openStore(t, testConfig(efs))
			type sent struct {
				topic string
				off   int64
				body  []byte
			}
			var acked []sent
			send := func(i int) PutResult {
				topic := fmt.Sprintf("W%d", i%7)
				b := bodyFor(i, 50)
				res := s.PutMessage(context.Background(), newRecord(topic, 0, b, nil), PutOptions{})
				if res.Status == PutOK {
					acked = append(acked, sent{topic, res.QueueOffset, b})
				}
				return res
			}
			for i := 0; i < 3; i++ {
				if res := send(i); res.Status != PutOK {
					t.Fatalf("put %d: %s", i, res.Status)
				}
			}
			waitDispatched(t, s)
			failing.Store(true)
			// Sends are acknowledged until dispatch reaches them and fails.
			i := 3
			var res PutResult
			deadline := time.Now().Add(10 * time.Second)
			for res = send(i); res.Status == PutOK; res = send(i) {
				if time.Now().After(deadline) {
					t.Fatal("puts still acknowledged while queue writes fail")
				}
				i++
				time.Sleep(time.Millisecond)
			}
			if res.Status != ServiceNotAvailable {
				t.Fatalf("put while queue writes fail: %s", res.Status)
			}
			why := s.RefusalReason()
			if !strings.Contains(why, "consume queue write error") || !strings.Contains(why, tc.err.Error()) {
				t.Fatalf("refusal reason %q does not say why", why)
			}
			// Still refused a while later (retries keep failing).
			wait.For(t, 10*time.Second, "a few retries", func() bool { return s.disp.blockedFailures.Load() >= 3 })
			if res := send(i); res.Status != ServiceNotAvailable {
				t.Fatalf("put while still failing: %s", res.Status)
			}
			failing.Store(false)
			wait.For(t, 10*time.Second, "puts accepted again", func() bool { return s.RefusalReason() == "" })
			for j := 0; j < 20; j++ {
				if res := send(i + 1 + j); res.Status != PutOK {
					t.Fatalf("put after recovery: %s", res.Status)
				}
			}
			waitDispatched(t, s)
			for _, a := range acked {
				getOne(t, s, a.topic, 0, a.off, a.body)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("close after recovery: %v", err)
			}
		})
	}
}

// TestOpenFailsWhenRedispatchCannotWrite: recovery's re-dispatch that keeps
// failing to write queues fails Open after a few retries, saying why,
// instead of waiting DispatchCatchUpTimeout.
func TestOpenFailsWhenRedispatchCannotWrite(t *testing.T) {
	mem := vfs.NewMem()
	s := openStore(t, testConfig(mem))
	for i := 0; i < 3; i++ {
		put(t, s, newRecord("Q", 0, bodyFor(i, 50), nil))
	}
	waitDispatched(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := mem.RemoveAll(testDir + "/consumequeue"); err != nil {
		t.Fatal(err)
	}
	efs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind == vfs.OpCreate && strings.Contains(op.Path, "/consumequeue/") {
			return syscall.ENOSPC
		}
		return nil
	}))
	s2, err := Open(testConfig(efs))
	if err == nil {
		s2.Close()
		t.Fatal("Open succeeded although no queue can be written")
	}
	if !strings.Contains(err.Error(), syscall.ENOSPC.Error()) {
		t.Fatalf("Open's error does not say why: %v", err)
	}
}
