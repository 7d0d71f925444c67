package store

import (
	"bytes"
	"errors"
	"log/slog"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store/commitlog"
	"github.com/rocketd/rocketd/internal/store/segment"
	"github.com/rocketd/rocketd/internal/vfs"
)

// flipStore is a SYNC_FLUSH store on MemFS whose clock moves 10 ms per put,
// so every message has its own store time.
type flipStore struct {
	mem   *vfs.MemFS
	cfg   Config
	clock *steppedClock
	acks  []ack
}

func newFlipStore() *flipStore {
	fs := &flipStore{mem: vfs.NewMem(), clock: newSteppedClock()}
	fs.cfg = testConfig(fs.mem)
	fs.cfg.FlushSync = true
	fs.cfg.Clock = fs.clock.Now
	return fs
}

// putUntil puts 1000-byte messages into four queues of topic F until the
// CommitLog reaches end.
func (f *flipStore) putUntil(t *testing.T, s *Store, end int64) {
	t.Helper()
	for s.CommitLogMaxOffset() < end {
		i := len(f.acks)
		f.clock.Advance(10 * time.Millisecond)
		r := newRecord("F", int32(i%4), bodyFor(i, 1000), map[string]string{"TAGS": "k"})
		res := put(t, s, r)
		f.acks = append(f.acks, ack{"F", int32(i % 4), i, 1000, res.WroteOffset, res.WroteBytes, res.QueueOffset})
	}
}

// seg returns the start of CommitLog segment n.
func (f *flipStore) seg(n int) int64 { return int64(n) * f.cfg.SegmentSize }

// nthIn returns the index of the n-th message stored in segment seg.
func (f *flipStore) nthIn(t *testing.T, seg, n int) int {
	t.Helper()
	for i, a := range f.acks {
		if a.offset >= f.seg(seg) && a.offset < f.seg(seg+1) {
			if n == 0 {
				return i
			}
			n--
		}
	}
	t.Fatalf("no message %d in segment %d", n, seg)
	return 0
}

// blankAt is the offset of the BLANK filler that ends segment seg.
func (f *flipStore) blankAt(seg int) int64 {
	var end int64
	for _, a := range f.acks {
		if a.offset < f.seg(seg+1) {
			end = a.offset + int64(a.wroteBytes)
		}
	}
	return end
}

func (f *flipStore) segPath(fsys vfs.FS, seg int64) string {
	return path.Join(f.cfg.Dir, CommitLogDir, segment.Name(seg))
}

// xor flips mask into the byte at CommitLog offset off of the image.
func (f *flipStore) xor(t *testing.T, fsys vfs.FS, off int64, mask byte) {
	t.Helper()
	seg := off / f.cfg.SegmentSize * f.cfg.SegmentSize
	file, err := fsys.OpenReadWrite(f.segPath(fsys, seg))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	b := make([]byte, 1)
	if _, err := file.ReadAt(b, off-seg); err != nil {
		t.Fatal(err)
	}
	b[0] ^= mask
	if _, err := file.WriteAt(b, off-seg); err != nil {
		t.Fatal(err)
	}
	if err := file.Sync(); err != nil {
		t.Fatal(err)
	}
}

// propsLengthAt returns the offset of message i's PROPERTIESLENGTH field.
func (f *flipStore) propsLengthAt(t *testing.T, fsys vfs.FS, i int) int64 {
	t.Helper()
	a := f.acks[i]
	seg := a.offset / f.cfg.SegmentSize * f.cfg.SegmentSize
	file, err := fsys.Open(f.segPath(fsys, seg))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	b := make([]byte, a.wroteBytes)
	if _, err := file.ReadAt(b, a.offset-seg); err != nil {
		t.Fatal(err)
	}
	rec, _, err := message.DecodeRecord(b, true)
	if err != nil {
		t.Fatal(err)
	}
	return a.offset + int64(a.wroteBytes) - int64(len(rec.Properties)) - 2
}

// storeFlip is a bit flip in segment 3 of 5: where, and where the log is cut.
type storeFlip struct {
	name string
	at   func(t *testing.T, f *flipStore, fsys vfs.FS) (off int64, mask byte, cut int64)
}

var storeFlips = []storeFlip{
	{"header/MAGICCODE", func(t *testing.T, f *flipStore, _ vfs.FS) (int64, byte, int64) {
		a := f.acks[f.nthIn(t, 3, 10)]
		return a.offset + message.PosMagic, 0x01, a.offset
	}},
	{"body", func(t *testing.T, f *flipStore, _ vfs.FS) (int64, byte, int64) {
		a := f.acks[f.nthIn(t, 3, 20)]
		return a.offset + 88 + 500, 0x10, a.offset
	}},
	{"properties/PROPERTIESLENGTH", func(t *testing.T, f *flipStore, fsys vfs.FS) (int64, byte, int64) {
		i := f.nthIn(t, 3, 30)
		return f.propsLengthAt(t, fsys, i) + 1, 0x04, f.acks[i].offset
	}},
	{"BLANK/magic byte", func(t *testing.T, f *flipStore, _ vfs.FS) (int64, byte, int64) {
		at := f.blankAt(3)
		return at + 4, 0xFF, at
	}},
}

// countMessages sums the messages in the queues of topic F.
func countMessages(s *Store) int64 {
	var n int64
	for q := int32(0); q < 4; q++ {
		n += s.MaxOffset("F", q) - s.MinOffset("F", q)
	}
	return n
}

// ackedBefore returns the acknowledged puts stored before offset.
func (f *flipStore) ackedBefore(offset int64) []ack {
	var out []ack
	for _, a := range f.acks {
		if a.offset < offset {
			out = append(out, a)
		}
	}
	return out
}

// TestStoreRefusesCorruptionAfterCleanShutdown is issue 12's report: a bit
// flip in the next-to-last of five segments after a clean shutdown. Open
// refuses with the file and offset (no file changed, logged at Error);
// with CommitLogCorruptionAction truncate it opens with the log cut there,
// the queues agreeing, and a later restart is clean.
func TestStoreRefusesCorruptionAfterCleanShutdown(t *testing.T) {
	for _, fl := range storeFlips {
		t.Run(fl.name, func(t *testing.T) {
			f := newFlipStore()
			s := openStore(t, f.cfg)
			f.putUntil(t, s, f.seg(4)+f.cfg.SegmentSize/2)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			off, mask, cut := fl.at(t, f, f.mem)
			f.xor(t, f.mem, off, mask)

			var logs bytes.Buffer
			cfg := f.cfg
			cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			before := f.mem.CrashClone()
			_, err := Open(cfg)
			var cerr *commitlog.CorruptionError
			if !errors.As(err, &cerr) || cerr.Offset != cut {
				t.Fatalf("open: %v, want corruption at %d", err, cut)
			}
			if !strings.Contains(err.Error(), f.segPath(f.mem, f.seg(3))) || cerr.ValidAfter == 0 {
				t.Fatalf("error does not name the segment or the records after: %v", err)
			}
			if !strings.Contains(logs.String(), "level=ERROR") {
				t.Fatalf("nothing logged at Error:\n%s", logs.String())
			}
			for _, seg := range []int{3, 4} {
				a, _ := vfs.ReadFile(before, f.segPath(before, f.seg(seg)))
				b, err := vfs.ReadFile(f.mem, f.segPath(f.mem, f.seg(seg)))
				if err != nil || !bytes.Equal(a, b) {
					t.Fatalf("refused open changed segment %d: %v", seg, err)
				}
			}
			if _, err := f.mem.Stat(path.Join(cfg.Dir, AbortFile)); !errors.Is(err, errNotExistForTest) {
				t.Fatalf("refused open left an abort file: %v", err)
			}

			cfg.CommitLogCorruptionAction = commitlog.CorruptionTruncate
			s2, err := Open(cfg)
			if err != nil {
				t.Fatalf("open with truncate: %v", err)
			}
			kept := f.ackedBefore(cut)
			if s2.CommitLogMaxOffset() != cut || countMessages(s2) != int64(len(kept)) {
				t.Fatalf("after truncate: end %d (want %d), %d messages (want %d of %d)",
					s2.CommitLogMaxOffset(), cut, countMessages(s2), len(kept), len(f.acks))
			}
			verifyAcked(t, s2, kept)
			checkNoUnitPastEnd(t, s2)
			if err := s2.Close(); err != nil {
				t.Fatal(err)
			}
			// The cut is final: the default (refuse) opens it now.
			cfg.CommitLogCorruptionAction = commitlog.CorruptionRefuse
			s3 := openStore(t, cfg)
			if countMessages(s3) != int64(len(kept)) {
				t.Fatalf("restart after truncate: %d messages", countMessages(s3))
			}
		})
	}
}

// TestStoreTornTailAfterCrash: the same flips after a crash, in data
// written after the last checkpoint, are a torn tail: the store opens with
// the log cut there and every message before it intact; a flip in data the
// checkpoint covers (its resume record, where the scan starts) is
// corruption and refused.
func TestStoreTornTailAfterCrash(t *testing.T) {
	for _, fl := range storeFlips {
		t.Run(fl.name, func(t *testing.T) {
			f := newFlipStore()
			s := openStore(t, f.cfg)
			f.putUntil(t, s, f.seg(1)+f.cfg.SegmentSize/2)
			if err := s.Close(); err != nil { // checkpoint: the last of these
				t.Fatal(err)
			}
			durable := len(f.acks)
			// No checkpoint update while the rest is written, then a crash.
			cfg := f.cfg
			cfg.CQFlushInterval = time.Hour
			s = openStore(t, cfg)
			f.putUntil(t, s, f.seg(4)+f.cfg.SegmentSize/2)
			image, image2 := f.mem.CrashClone(), f.mem.CrashClone()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			off, mask, cut := fl.at(t, f, image)
			f.xor(t, image, off, mask)
			cfg.FS = image
			cfg.CQFlushInterval = f.cfg.CQFlushInterval
			s2 := openStore(t, cfg)
			if s2.LastExitOK() {
				t.Fatal("crash not seen")
			}
			kept := f.ackedBefore(cut)
			if s2.CommitLogMaxOffset() != cut || countMessages(s2) != int64(len(kept)) {
				t.Fatalf("after crash: end %d (want %d), %d messages (want %d)", s2.CommitLogMaxOffset(), cut, countMessages(s2), len(kept))
			}
			verifyAcked(t, s2, kept)
			checkNoUnitPastEnd(t, s2)

			// The same crash with a flip in a message the checkpoint covers:
			// its resume record, where the scan after a crash starts (as
			// RocketMQ's starts at its checkpoint's segment, older data is
			// not rescanned).
			old := f.acks[durable-1]
			f.xor(t, image2, old.offset+88+100, 0x01)
			cfg.FS = image2
			if _, err := Open(cfg); !errors.As(err, new(*commitlog.CorruptionError)) {
				t.Fatalf("flip below the checkpoint after a crash: %v, want corruption", err)
			}
		})
	}
}

// TestStoreBlankBitFlip: one flipped bit in a BLANK filler's magic or
// length loses nothing.
func TestStoreBlankBitFlip(t *testing.T) {
	f := newFlipStore()
	s := openStore(t, f.cfg)
	f.putUntil(t, s, f.seg(4)+f.cfg.SegmentSize/2)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f.xor(t, f.mem, f.blankAt(3)+7, 0x02)
	f.xor(t, f.mem, f.blankAt(2)+2, 0x80)
	s2 := openStore(t, f.cfg)
	if countMessages(s2) != int64(len(f.acks)) {
		t.Fatalf("%d of %d messages", countMessages(s2), len(f.acks))
	}
	verifyAcked(t, s2, f.acks)
}

// TestStoreSkipBodyCRCOnRecover: with checkCRCOnRecover=false a body flip
// after a clean shutdown is not seen: the store opens with every message;
// with the check it refuses (TestStoreRefusesCorruptionAfterCleanShutdown).
func TestStoreSkipBodyCRCOnRecover(t *testing.T) {
	f := newFlipStore()
	s := openStore(t, f.cfg)
	f.putUntil(t, s, f.seg(4)+f.cfg.SegmentSize/2)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f.xor(t, f.mem, f.acks[f.nthIn(t, 3, 2)].offset+88+100, 0x01)
	if _, err := Open(f.cfg); !errors.As(err, new(*commitlog.CorruptionError)) {
		t.Fatalf("open with the check: %v, want corruption", err)
	}
	cfg := f.cfg
	cfg.SkipBodyCRCOnRecover = true
	s2 := openStore(t, cfg)
	if countMessages(s2) != int64(len(f.acks)) {
		t.Fatalf("%d messages after recovery without the check, want %d", countMessages(s2), len(f.acks))
	}
}
