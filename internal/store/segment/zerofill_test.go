package segment

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/rocketd/rocketd/internal/vfs"
)

// writebackFile is a vfs.File that records the Writeback hints it gets and
// checks them against what was written.
type writebackFile struct {
	vfs.File
	t       *testing.T
	written int64   // end of the data written so far (the fill is sequential)
	started []int64 // span starts whose writeback was started and not yet waited for
	waited  [][2]int64
}

func (f *writebackFile) WriteAt(p []byte, off int64) (int, error) {
	if off != f.written {
		f.t.Fatalf("write at %d, want sequential at %d", off, f.written)
	}
	f.written += int64(len(p))
	return f.File.WriteAt(p, off)
}

func (f *writebackFile) Writeback(off, n int64, wait bool) error {
	if off+n > f.written {
		f.t.Fatalf("writeback of [%d, %d) beyond the written end %d", off, off+n, f.written)
	}
	if !wait {
		f.started = append(f.started, off)
		if len(f.started) > 2 {
			f.t.Fatalf("%d spans in flight (%v), want at most 2", len(f.started), f.started)
		}
		return nil
	}
	if len(f.started) == 0 || f.started[0] != off {
		f.t.Fatalf("wait for [%d, %d) that was not the oldest started span (%v)", off, off+n, f.started)
	}
	f.started = f.started[1:]
	f.waited = append(f.waited, [2]int64{off, n})
	return nil
}

func TestZeroFillWriteBehind(t *testing.T) {
	for _, size := range []int64{1, zeroChunk - 1, writeBehind, writeBehind + 1, 2 * writeBehind, 9*writeBehind + 12345} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			mem := vfs.NewMem()
			inner, err := mem.Create(filepath.Join("/", "seg"))
			if err != nil {
				t.Fatal(err)
			}
			// Garbage where the zeros go: the fill must overwrite all of it.
			if _, err := inner.WriteAt(bytes.Repeat([]byte{0xAB}, int(size)), 0); err != nil {
				t.Fatal(err)
			}
			f := &writebackFile{File: inner, t: t}
			if err := zeroFill(f, size); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, size)
			if _, err := inner.ReadAt(got, 0); err != nil {
				t.Fatal(err)
			}
			if i := bytes.IndexFunc(got, func(r rune) bool { return r != 0 }); i >= 0 {
				t.Fatalf("byte %d not zeroed", i)
			}
			if f.written != size {
				t.Fatalf("wrote %d bytes, want %d", f.written, size)
			}
			// Every span but the last one or two was waited for, in order.
			spans := (size + writeBehind - 1) / writeBehind
			if want := max(spans-1, 0); int64(len(f.waited)) != want {
				t.Fatalf("waited for %d spans, want %d (%v)", len(f.waited), want, f.waited)
			}
			for i, w := range f.waited {
				if w != [2]int64{int64(i) * writeBehind, writeBehind} {
					t.Fatalf("wait %d = %v", i, w)
				}
			}
		})
	}
}
