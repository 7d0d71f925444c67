package commitlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store/segment"
	"github.com/rocketd/rocketd/internal/vfs"
)

// logSink collects log output for assertions (the log may write from its
// goroutines).
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// corruptLog is a closed log of five segments written with a clock that
// advances 1 ms per reading, so every record has its own store time.
type corruptLog struct {
	mem     *vfs.MemFS
	cfg     Config
	puts    []PutResult
	stamps  []int64 // store time of puts[i]
	props   []string
	segs    []int64 // segment starts
	blankAt int64   // offset of the BLANK filler ending segs[3]
}

func writeCorruptLog(t *testing.T) *corruptLog {
	t.Helper()
	var ms atomic.Int64
	ms.Store(1_700_000_000_000)
	c := &corruptLog{mem: vfs.NewMem()}
	c.cfg = testConfig(c.mem, true)
	c.cfg.Now = func() time.Time { return time.UnixMilli(ms.Add(1)) }
	l := openLog(t, c.cfg)
	for i := 0; l.MaxOffset() < 4*testSegment+testSegment/2; i++ {
		props := fmt.Sprintf("UNIQ_KEY\x01key-%04d\x02TAGS\x01t", i)
		res := l.Put(context.Background(), newRecord("Flip", int32(i%4), bytes.Repeat([]byte{byte(i)}, 2500+i%7), props), PutOptions{})
		if res.Status != PutOK {
			t.Fatalf("put %d: %v", i, res.Status)
		}
		c.puts = append(c.puts, res)
		c.stamps = append(c.stamps, res.StoreTimestamp)
		c.props = append(c.props, props)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 5; i++ {
		c.segs = append(c.segs, i*testSegment)
	}
	// The last record of segment 3 ends where its BLANK starts.
	for _, p := range c.puts {
		if p.WroteOffset < c.segs[4] {
			c.blankAt = p.WroteOffset + int64(p.WroteBytes)
		}
	}
	return c
}

// firstIn returns the index of the n-th record (0-based) starting in the
// segment at start.
func (c *corruptLog) firstIn(start int64, n int) int {
	for i, p := range c.puts {
		if p.WroteOffset >= start && p.WroteOffset < start+testSegment {
			if n == 0 {
				return i
			}
			n--
		}
	}
	panic("no such record")
}

func (c *corruptLog) xor(t *testing.T, off int64, mask byte) {
	t.Helper()
	seg := off / testSegment * testSegment
	f, err := c.mem.OpenReadWrite(filepath.Join(c.cfg.Dir, segment.Name(seg)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off-seg); err != nil {
		t.Fatal(err)
	}
	b[0] ^= mask
	if _, err := f.WriteAt(b, off-seg); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// image returns every segment file's bytes.
func (c *corruptLog) image(t *testing.T) map[string][]byte {
	t.Helper()
	names, err := c.mem.List(c.cfg.Dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, name := range names {
		b, err := vfs.ReadFile(c.mem, filepath.Join(c.cfg.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	return out
}

// recover opens the log and recovers it with opts; it returns the result,
// the records found, the error and the log output.
func (c *corruptLog) recover(t *testing.T, opts RecoverOptions) (RecoverResult, []int64, error, string) {
	t.Helper()
	var sink logSink
	cfg := c.cfg
	cfg.Logger = slog.New(slog.NewTextHandler(&sink, nil))
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var offs []int64
	opts.OnRecord = func(_ *message.Record, off int64, _ int32) error { offs = append(offs, off); return nil }
	res, err := l.RecoverWith(opts)
	return res, offs, err, sink.String()
}

// flip is one bit flip in one position class.
type flip struct {
	name string
	// at returns the offset of the byte to change and the mask; bad is
	// the index of the damaged record, -1 for the BLANK filler ending
	// segment 3.
	at func(c *corruptLog) (off int64, mask byte, bad int)
}

// cut returns where recovery stops for a flip of record bad (-1: the BLANK)
// and where valid data resumes.
func (c *corruptLog) cut(bad int) (cut, resume int64) {
	if bad < 0 {
		return c.blankAt, c.segs[4]
	}
	return c.puts[bad].WroteOffset, c.puts[bad+1].WroteOffset
}

// kept is the number of records before offset.
func (c *corruptLog) kept(offset int64) int {
	n := 0
	for _, p := range c.puts {
		if p.WroteOffset < offset {
			n++
		}
	}
	return n
}

// detectedFlips are flips recovery sees, in a record of segment 3 (of 0-4,
// the next-to-last as in issue 12) or in its BLANK filler.
var detectedFlips = []flip{
	{"header/TOTALSIZE", func(c *corruptLog) (int64, byte, int) {
		i := c.firstIn(c.segs[3], 3)
		return c.puts[i].WroteOffset + message.PosTotalSize + 2, 0x04, i
	}},
	{"header/MAGICCODE", func(c *corruptLog) (int64, byte, int) {
		i := c.firstIn(c.segs[3], 3)
		return c.puts[i].WroteOffset + message.PosMagic + 1, 0x10, i
	}},
	{"header/BODYCRC", func(c *corruptLog) (int64, byte, int) {
		i := c.firstIn(c.segs[3], 4)
		return c.puts[i].WroteOffset + message.PosBodyCRC + 3, 0x01, i
	}},
	{"header/PHYSICALOFFSET", func(c *corruptLog) (int64, byte, int) {
		i := c.firstIn(c.segs[3], 4)
		return c.puts[i].WroteOffset + message.PosPhysicalOffset + 6, 0x80, i
	}},
	{"body", func(c *corruptLog) (int64, byte, int) {
		i := c.firstIn(c.segs[3], 5)
		return c.puts[i].WroteOffset + 88 + 1000, 0x20, i
	}},
	{"properties/PROPERTIESLENGTH", func(c *corruptLog) (int64, byte, int) {
		i := c.firstIn(c.segs[3], 5)
		p := c.puts[i]
		// PROPERTIESLENGTH is the 2 bytes before the properties.
		return p.WroteOffset + int64(p.WroteBytes) - int64(len(c.props[i])) - 1, 0x02, i
	}},
	{"body/first record of the segment", func(c *corruptLog) (int64, byte, int) {
		i := c.firstIn(c.segs[3], 0)
		return c.puts[i].WroteOffset + 88 + 7, 0x01, i
	}},
	{"BLANK/magic byte", func(c *corruptLog) (int64, byte, int) {
		// A whole byte of the magic: too far from a BLANK to be one.
		return c.blankAt + 5, 0xFF, -1
	}},
}

// harmlessFlips are flips recovery handles without losing a record.
var harmlessFlips = []struct {
	flip
	logged string // in the Error log; "" = nothing logged at Error
}{
	{flip{"BLANK/length", func(c *corruptLog) (int64, byte, int) { return c.blankAt + 3, 0x01, -1 }},
		"BLANK filler with a damaged length"},
	{flip{"BLANK/magic bit", func(c *corruptLog) (int64, byte, int) { return c.blankAt + 6, 0x08, -1 }},
		"BLANK filler with a damaged magic code"},
	{flip{"BLANK/padding", func(c *corruptLog) (int64, byte, int) { return c.blankAt + 100, 0x40, -1 }},
		""},
	// The zeros after the last record: cut (and zeroed) as garbage.
	{flip{"end of data/padding", func(c *corruptLog) (int64, byte, int) {
		last := c.puts[len(c.puts)-1]
		return last.WroteOffset + int64(last.WroteBytes) + 2, 0x10, -1
	}}, ""},
}

func (c *corruptLog) offsets(n int) []int64 {
	var out []int64
	for _, p := range c.puts[:n] {
		out = append(out, p.WroteOffset)
	}
	return out
}

func sameOffsets(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCorruptionAfterCleanShutdown: a detected flip in segment 3 of 5 after
// a clean shutdown is corruption: refused by default with the file, offset
// and class named and nothing changed; truncated on request, which loses
// what follows and says so at Error.
func TestCorruptionAfterCleanShutdown(t *testing.T) {
	for _, fl := range detectedFlips {
		t.Run(fl.name, func(t *testing.T) {
			c := writeCorruptLog(t)
			off, mask, bad := fl.at(c)
			c.xor(t, off, mask)
			badOff, resume := c.cut(bad)
			before := c.image(t)

			for _, opts := range []RecoverOptions{
				{From: NormalRecovery, CleanShutdown: true, DurableTimestamp: c.stamps[len(c.stamps)-1]},
				{From: NormalRecovery, CleanShutdown: true},            // no checkpoint: the resync decides
				{From: 0, DurableTimestamp: c.stamps[len(c.stamps)-1]}, // a crash, the flip below the checkpoint
			} {
				_, _, err, logs := c.recover(t, opts)
				var cerr *CorruptionError
				if !errors.As(err, &cerr) {
					t.Fatalf("%+v: want a CorruptionError, got %v", opts, err)
				}
				if cerr.Offset != badOff || cerr.Segment != filepath.Join(c.cfg.Dir, segment.Name(c.segs[3])) ||
					cerr.FileOffset != badOff-c.segs[3] || len(cerr.LaterSegments) != 1 {
					t.Fatalf("%+v: error %+v, want offset %d in segment 3", opts, cerr, badOff)
				}
				// The resync finds the record after the bad one (the next
				// segment's first after a BLANK) and counts the rest.
				if cerr.Resume != resume || cerr.ValidAfter != len(c.puts)-c.kept(resume) {
					t.Fatalf("resume at %d with %d records, want %d with %d", cerr.Resume, cerr.ValidAfter, resume, len(c.puts)-c.kept(resume))
				}
				msg := err.Error()
				for _, want := range []string{cerr.Segment, fmt.Sprint(badOff), "truncate"} {
					if !strings.Contains(msg, want) {
						t.Fatalf("error %q does not mention %q", msg, want)
					}
				}
				if !strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "refusing") {
					t.Fatalf("not logged at Error: %s", logs)
				}
				if after := c.image(t); len(after) != len(before) {
					t.Fatalf("refused recovery changed the files: %d -> %d", len(before), len(after))
				} else {
					for name, b := range before {
						if !bytes.Equal(after[name], b) {
							t.Fatalf("refused recovery changed %s", name)
						}
					}
				}
			}

			// Truncation on request: today's cut, at Error.
			res, offs, err, logs := c.recover(t, RecoverOptions{From: NormalRecovery, CleanShutdown: true,
				DurableTimestamp: c.stamps[len(c.stamps)-1], OnCorruption: CorruptionTruncate})
			if err != nil || res.End != badOff || res.Corruption == nil {
				t.Fatalf("truncate: end %d (want %d), %v", res.End, badOff, err)
			}
			// Normal recovery scans segments 2-4: the records of 2 and 3 up to the cut.
			if want := c.offsets(c.kept(badOff))[c.firstIn(c.segs[2], 0):]; !sameOffsets(offs, want) {
				t.Fatalf("truncate kept %d records, want %d", len(offs), len(want))
			}
			if !strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "truncating") {
				t.Fatalf("truncation not logged at Error: %s", logs)
			}
			// Persistent: a later clean recovery agrees, nothing to refuse.
			res2, _, err, _ := c.recover(t, RecoverOptions{From: 0, CleanShutdown: true})
			if err != nil || res2.End != badOff {
				t.Fatalf("second recovery: end %d, %v", res2.End, err)
			}
			if n := len(c.image(t)); n != 4 {
				t.Fatalf("%d segment files after the truncation, want 4", n)
			}
		})
	}
}

// TestTornTailAfterCrash: the same flips after a crash, in data newer than
// the checkpoint's durable record, are a torn tail: cut as before, with
// no error, all records before kept.
func TestTornTailAfterCrash(t *testing.T) {
	for _, fl := range detectedFlips {
		t.Run(fl.name, func(t *testing.T) {
			c := writeCorruptLog(t)
			off, mask, bad := fl.at(c)
			c.xor(t, off, mask)
			badOff, _ := c.cut(bad)
			nKept := c.kept(badOff)
			// The checkpoint's durable record is the last one kept.
			res, offs, err, logs := c.recover(t, RecoverOptions{From: 0, DurableTimestamp: c.stamps[nKept-1]})
			if err != nil || res.End != badOff || res.Corruption != nil {
				t.Fatalf("end %d (want %d), corruption %v, %v", res.End, badOff, res.Corruption, err)
			}
			if !sameOffsets(offs, c.offsets(nKept)) {
				t.Fatalf("%d records recovered, want %d", len(offs), nKept)
			}
			if !strings.Contains(logs, "torn tail") {
				t.Fatalf("the cut is not logged: %s", logs)
			}
			if n := len(c.image(t)); n != 4 {
				t.Fatalf("%d segment files after the cut, want 4", n)
			}
		})
	}
}

// TestHarmlessFlips: flips in a BLANK filler that leave the segment end
// recognisable lose nothing, clean shutdown or not; a damaged length or
// magic is logged at Error, the zero padding after the filler is never read.
// A flip in the zeros after the last record is garbage after the end: cut,
// nothing lost.
func TestHarmlessFlips(t *testing.T) {
	for _, fl := range harmlessFlips {
		for _, clean := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/clean=%v", fl.name, clean), func(t *testing.T) {
				c := writeCorruptLog(t)
				off, mask, _ := fl.at(c)
				c.xor(t, off, mask)
				res, offs, err, logs := c.recover(t, RecoverOptions{From: 0, CleanShutdown: clean,
					DurableTimestamp: c.stamps[len(c.stamps)-1]})
				last := c.puts[len(c.puts)-1]
				if err != nil || res.End != last.WroteOffset+int64(last.WroteBytes) {
					t.Fatalf("end %d, %v", res.End, err)
				}
				if !sameOffsets(offs, c.offsets(len(c.puts))) {
					t.Fatalf("%d of %d records recovered", len(offs), len(c.puts))
				}
				if fl.logged == "" && strings.Contains(logs, "level=ERROR") {
					t.Fatalf("logged at Error: %s", logs)
				}
				if fl.logged != "" && (!strings.Contains(logs, fl.logged) || !strings.Contains(logs, "level=ERROR")) {
					t.Fatalf("not logged at Error: %s", logs)
				}
			})
		}
	}
}

// TestPropertyFlipUndetected documents the format's blind spot: BODYCRC
// covers the body only (as in RocketMQ), so a flip inside the properties
// (or topic, queue id, timestamps, hosts) leaves a valid record with a
// changed value. Recovery keeps every record; nothing is cut.
func TestPropertyFlipUndetected(t *testing.T) {
	c := writeCorruptLog(t)
	i := c.firstIn(c.segs[3], 2)
	p := c.puts[i]
	c.xor(t, p.WroteOffset+int64(p.WroteBytes)-3, 0x01) // in "TAGS\x01t"
	res, offs, err, _ := c.recover(t, RecoverOptions{From: NormalRecovery, CleanShutdown: true,
		DurableTimestamp: c.stamps[len(c.stamps)-1]})
	last := c.puts[len(c.puts)-1]
	if err != nil || res.End != last.WroteOffset+int64(last.WroteBytes) {
		t.Fatalf("end %d, %v", res.End, err)
	}
	if n := len(c.puts) - c.firstIn(c.segs[2], 0); len(offs) != n {
		t.Fatalf("%d records scanned, want %d", len(offs), n)
	}
}

// TestLogEndsBeforeCheckpoint: zeros where the checkpoint says durable
// records are (a lost page) are corruption after a crash too.
func TestLogEndsBeforeCheckpoint(t *testing.T) {
	c := writeCorruptLog(t)
	i := c.firstIn(c.segs[4], 2)
	p := c.puts[i]
	f, err := c.mem.OpenReadWrite(filepath.Join(c.cfg.Dir, segment.Name(c.segs[4])))
	if err != nil {
		t.Fatal(err)
	}
	// Zero from record i to the end of the segment: nothing valid follows.
	if _, err := f.WriteAt(make([]byte, testSegment-(p.WroteOffset-c.segs[4])), p.WroteOffset-c.segs[4]); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	_, _, err, _ = c.recover(t, RecoverOptions{From: 0, DurableTimestamp: c.stamps[len(c.stamps)-1]})
	var cerr *CorruptionError
	if !errors.As(err, &cerr) || cerr.Offset != p.WroteOffset || cerr.Resume != -1 {
		t.Fatalf("want corruption at %d with nothing after, got %v", p.WroteOffset, err)
	}
	// With the checkpoint at the last record before the zeros: a torn tail.
	res, offs, err, _ := c.recover(t, RecoverOptions{From: 0, DurableTimestamp: c.stamps[i-1]})
	if err != nil || res.End != p.WroteOffset || len(offs) != i {
		t.Fatalf("end %d, %d records, %v", res.End, len(offs), err)
	}
}

// TestNoSilentLossAfterCleanShutdown flips one bit at every byte of a
// middle segment (records, BLANK, padding) of a closed log and recovers as
// after a clean shutdown: each flip either loses no record (a field BODYCRC
// does not cover, the padding) or is refused as corruption at the damaged
// record. Never fewer records without an error: issue 12's failure.
func TestNoSilentLossAfterCleanShutdown(t *testing.T) {
	var ms atomic.Int64
	ms.Store(1_700_000_000_000)
	mem := vfs.NewMem()
	cfg := testConfig(mem, true)
	cfg.SegmentSize = 4096
	cfg.MaxMessageSize = 1024
	cfg.RingSize = 1 // raised to the minimum: each Open allocates it
	cfg.Now = func() time.Time { return time.UnixMilli(ms.Add(1)) }
	l := openLog(t, cfg)
	var puts []PutResult
	for i := 0; l.MaxOffset() < 4*4096+2048; i++ {
		r := newRecord("S", int32(i%3), bytes.Repeat([]byte{byte(i)}, 100+i%50), fmt.Sprintf("KEYS\x01k%d", i))
		res := l.Put(context.Background(), r, PutOptions{})
		if res.Status != PutOK {
			t.Fatal(res.Status)
		}
		puts = append(puts, res)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	lastTS := puts[len(puts)-1].StoreTimestamp
	const seg = 2 * 4096 // segment 2 of 0-4
	refused, kept := 0, 0
	stride := int64(1)
	if raceEnabled || testing.Short() {
		stride = 5 // every record still gets flips in several fields
	}
	for pos := int64(0); pos < 4096; pos += stride {
		img := mem.CrashClone()
		f, err := img.OpenReadWrite(filepath.Join(cfg.Dir, segment.Name(seg)))
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 1)
		_, _ = f.ReadAt(b, pos)
		b[0] ^= 1 << (pos % 8)
		_, _ = f.WriteAt(b, pos)
		_ = f.Close()

		c := cfg
		c.FS = img
		lr, err := Open(c)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		res, err := lr.RecoverWith(RecoverOptions{From: 0, CleanShutdown: true, DurableTimestamp: lastTS,
			OnRecord: func(*message.Record, int64, int32) error { n++; return nil }})
		_ = lr.Close()
		var cerr *CorruptionError
		switch {
		case errors.As(err, &cerr):
			// The refusal names the record holding the flipped byte (or
			// the BLANK at the segment end).
			hit := int64(-1)
			for _, p := range puts {
				if p.WroteOffset <= seg+pos && seg+pos < p.WroteOffset+int64(p.WroteBytes) {
					hit = p.WroteOffset
				}
			}
			if hit < 0 { // in the BLANK
				hit = cerr.Offset
				if hit < seg || hit+8 <= seg+pos {
					t.Fatalf("flip at %d: corruption reported at %d", seg+pos, cerr.Offset)
				}
			}
			if cerr.Offset != hit {
				t.Fatalf("flip at %d: corruption reported at %d, want the record at %d", seg+pos, cerr.Offset, hit)
			}
			refused++
		case err != nil:
			t.Fatalf("flip at %d: %v", seg+pos, err)
		case n != len(puts) || res.End != puts[len(puts)-1].WroteOffset+int64(puts[len(puts)-1].WroteBytes):
			t.Fatalf("flip at %d: silently recovered %d of %d records, end %d", seg+pos, n, len(puts), res.End)
		default:
			kept++
		}
	}
	t.Logf("of %d flips: %d refused as corruption, %d lost nothing", refused+kept, refused, kept)
	if refused == 0 || kept == 0 {
		t.Fatal("the sweep did not exercise both outcomes")
	}
}

// TestSkipBodyCRC: checkCRCOnRecover=false (SkipBodyCRC) keeps a record
// whose body no longer matches its BODYCRC, as Java does; with the check
// (the default) recovery after a crash cuts the log there.
func TestSkipBodyCRC(t *testing.T) {
	for _, skip := range []bool{false, true} {
		c := writeCorruptLog(t)
		bad := c.firstIn(c.segs[3], 5)
		c.xor(t, c.puts[bad].WroteOffset+88+1000, 0x20)
		last := c.puts[len(c.puts)-1]
		res, offs, err, _ := c.recover(t, RecoverOptions{From: 0, SkipBodyCRC: skip})
		if err != nil {
			t.Fatalf("skip=%v: %v", skip, err)
		}
		wantEnd, wantN := c.puts[bad].WroteOffset, bad
		if skip {
			wantEnd, wantN = last.WroteOffset+int64(last.WroteBytes), len(c.puts)
		}
		if res.End != wantEnd || len(offs) != wantN {
			t.Errorf("skip=%v: end %d with %d records, want %d with %d", skip, res.End, len(offs), wantEnd, wantN)
		}
	}
}
