package index

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/rocketd/rocketd/internal/vfs"
)

// FuzzHeaderItem: the header and item decoders take any bytes; what
// decodes re-encodes to the same bytes (indexCount <= 0 reads as 1).
func FuzzHeaderItem(f *testing.F) {
	f.Add(Header{1, 2, 3, 4, 5, 6}.AppendTo(nil))
	f.Add(make([]byte, 39))
	f.Add(bytes.Repeat([]byte{0xff}, 40))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHeader(b)
		if (err != nil) != (len(b) < HeaderSize) {
			t.Fatalf("header err %v for %d bytes", err, len(b))
		}
		if err == nil {
			if h.IndexCount < 1 {
				t.Fatalf("indexCount %d", h.IndexCount)
			}
			re := h.AppendTo(nil)
			if !bytes.Equal(re[:36], b[:36]) {
				t.Fatal("header re-encoding differs")
			}
		}
		it, err := ParseItem(b)
		if (err != nil) != (len(b) < ItemSize) {
			t.Fatalf("item err %v for %d bytes", err, len(b))
		}
		if err == nil && !bytes.Equal(it.AppendTo(nil), b[:ItemSize]) {
			t.Fatal("item re-encoding differs")
		}
	})
}

// FuzzDamagedFile: a file of arbitrary content (a damaged or foreign
// index file) is opened, queried and written to without a panic or an
// endless chain walk, and a query never returns more than maxNum.
func FuzzDamagedFile(f *testing.F) {
	const slots, items = 4, 8
	size := int(FileSize(slots, items))
	valid := Header{1000, 5000, 10, 90, 1, 3}.AppendTo(nil)
	valid = append(valid, make([]byte, size-len(valid))...)
	f.Add(valid, "k", uint8(5))
	f.Add(bytes.Repeat([]byte{0x00, 0x00, 0x00, 0x01}, size/4), "k", uint8(64))
	f.Add(bytes.Repeat([]byte{0x7f}, size), "", uint8(1))
	f.Fuzz(func(t *testing.T, content []byte, key string, maxNum uint8) {
		if len(content) > size {
			content = content[:size]
		}
		content = append(content, make([]byte, size-len(content))...)
		fs := vfs.NewMem()
		if err := vfs.MkdirAllSync(fs, dir, 0o755); err != nil {
			t.Fatal(err)
		}
		file, err := fs.Create(filepath.Join(dir, "20260101000000000"))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = file.WriteAt(content, 0)
		_ = file.Close()
		x, err := Open(Options{FS: fs, Dir: dir, HashSlotNum: slots, IndexNum: items, LastExitOK: true, Clock: testClock()})
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		for _, k := range []string{key, "k"} {
			r, err := x.Query("T", k, int(maxNum), -1<<62, 1<<62)
			if err != nil || len(r.Offsets) > int(maxNum) {
				t.Fatalf("query: %d offsets, %v", len(r.Offsets), err)
			}
		}
		x.Stage("T", props("KEYS", key+" k"), 0, 1<<40, 1<<41)
		if err := x.Commit(); err != nil {
			t.Fatal(err)
		}
		r, err := x.Query("T", "k", 64, -1<<62, 1<<62)
		if err != nil || len(r.Offsets) > 64 {
			t.Fatalf("after write: %d offsets, %v", len(r.Offsets), err)
		}
	})
}
