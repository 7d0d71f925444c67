package message

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// segmentImage lays records out as a commit-log segment of the given size
// would hold them: back to back, a BLANK when the next does not fit, zeros
// after. It returns the image and the offset of each record written.
func segmentImage(size int, recs []Record) ([]byte, []int) {
	buf := make([]byte, 0, size)
	var offs []int
	for i := range recs {
		n := recs[i].Size()
		if len(buf)+n+BlankLen > size {
			buf = AppendBlank(buf, int32(size-len(buf)))
			break
		}
		offs = append(offs, len(buf))
		recs[i].PhysicalOffset = int64(len(buf))
		buf = AppendRecord(buf, &recs[i])
	}
	return append(buf, make([]byte, size-len(buf))...), offs
}

func manyRecords(n int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		r := sampleRecord()
		r.QueueOffset = int64(i)
		r.Body = bytes.Repeat([]byte{byte(i)}, i*7)
		if i%3 == 1 {
			r.BornHost = netip.MustParseAddrPort("[2001:db8::9]:1")
		}
		recs[i] = r
	}
	return recs
}

func TestScannerSegment(t *testing.T) {
	img, offs := segmentImage(4096, manyRecords(100))
	if len(offs) == 100 {
		t.Fatal("test wants a full segment")
	}
	sc := NewScanner(img, true)
	var got []int
	for sc.Next() {
		got = append(got, sc.Offset())
		if sc.Record().QueueOffset != int64(len(got)-1) || sc.Record().PhysicalOffset != int64(sc.Offset()) {
			t.Fatalf("record %d: %+v", len(got)-1, sc.Record())
		}
		if !bytes.Equal(sc.Bytes(), img[sc.Offset():sc.Offset()+sc.Size()]) {
			t.Fatal("Bytes")
		}
	}
	if !errors.Is(sc.Err(), ErrBlank) {
		t.Fatalf("Err = %v, want blank", sc.Err())
	}
	if len(got) != len(offs) || sc.Pos() != offs[len(offs)-1]+manyRecords(100)[len(offs)-1].Size() {
		t.Fatalf("scanned %d records to %d, wrote %d", len(got), sc.Pos(), len(offs))
	}
}

func TestScannerStops(t *testing.T) {
	recs := manyRecords(5)
	var buf []byte
	var ends []int
	for i := range recs {
		buf = AppendRecord(buf, &recs[i])
		ends = append(ends, len(buf))
	}
	cases := []struct {
		name string
		img  []byte
		want error
		pos  int
	}{
		{"exact end", buf, nil, ends[4]},
		{"zero tail", append(bytes.Clone(buf), make([]byte, 100)...), ErrZeroed, ends[4]},
		{"torn tail", buf[:ends[4]-3], ErrTruncated, ends[3]},
		{"half header", buf[:ends[3]+5], ErrTruncated, ends[3]},
		{"crc in the middle", mutate(buf, ends[1]+88+3, 0xFF), ErrCorrupt, ends[1]},
		{"garbage after", append(bytes.Clone(buf), 1, 2, 3, 4, 5, 6, 7, 8, 9), ErrCorrupt, ends[4]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var sc Scanner
			sc.CheckCRC = true
			sc.Reset(tc.img)
			for sc.Next() {
			}
			if tc.want == nil && sc.Err() != nil || tc.want != nil && !errors.Is(sc.Err(), tc.want) {
				t.Fatalf("Err = %v, want %v", sc.Err(), tc.want)
			}
			if sc.Pos() != tc.pos {
				t.Fatalf("Pos = %d, want %d", sc.Pos(), tc.pos)
			}
			if sc.Next() {
				t.Fatal("Next after the end")
			}
		})
	}
}

// TestScannerChunked reads a segment through a small window, as recovery
// does, continuing from Pos after each ErrTruncated.
func TestScannerChunked(t *testing.T) {
	img, offs := segmentImage(64*1024, manyRecords(400))
	for _, window := range []int{200, 333, 1000, 4096} {
		var got []int
		base := 0
		var sc Scanner
		sc.NoCopy = true
		for {
			end := min(base+window, len(img))
			// A record larger than the window needs a larger read.
			if need := int(RecordTotalSize(img[base:])); base+8 <= len(img) && need > window && need < len(img)-base {
				end = base + need
			}
			sc.Reset(img[base:end])
			for sc.Next() {
				got = append(got, base+sc.Offset())
			}
			base += sc.Pos()
			if !errors.Is(sc.Err(), ErrTruncated) && sc.Err() != nil || end == len(img) {
				break
			}
		}
		if len(got) != len(offs) {
			t.Fatalf("window %d: %d records, want %d", window, len(got), len(offs))
		}
		for i := range got {
			if got[i] != offs[i] {
				t.Fatalf("window %d: record %d at %d, want %d", window, i, got[i], offs[i])
			}
		}
	}
}

func TestBatch(t *testing.T) {
	var body []byte
	body = AppendBatchItem(body, 1, []byte("one"), "UNIQ_KEY\x01A\x02TAGS\x01t")
	body = AppendBatchItem(body, 0, nil, "")
	body = AppendBatchItem(body, 9, bytes.Repeat([]byte{'z'}, 300), "UNIQ_KEY\x01B\x02")
	items, err := DecodeBatch(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 || items[0].Flag != 1 || string(items[0].Body) != "one" ||
		string(items[0].Properties) != "UNIQ_KEY\x01A\x02TAGS\x01t" || len(items[1].Body) != 0 ||
		items[2].Flag != 9 || len(items[2].Body) != 300 {
		t.Fatalf("items = %+v", items)
	}
	// The golden layout of the first item, by hand from spec §5.5.
	want := []byte{0, 0, 0, 22 + 3 + 17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 3, 'o', 'n', 'e', 0, 17}
	if !bytes.Equal(body[:len(want)], want) {
		t.Fatalf("item header %x, want %x", body[:len(want)], want)
	}
	for _, bad := range [][]byte{nil, body[:21], body[:len(body)-1], mutate(body, 19, 200), mutate(body, 3, 99), mutate(body, 0, 0x80)} {
		if _, err := DecodeBatch(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeBatch(%x...) = %v", bad[:min(len(bad), 8)], err)
		}
	}
	cases := []struct{ item, batch, want string }{
		{"A\x011", "WAIT\x01false", "A\x011\x02WAIT\x01false"},
		{"A\x011\x02", "WAIT\x01false", "A\x011\x02WAIT\x01false"},
		{"", "WAIT\x01false", "WAIT\x01false"},
		{"A\x011", "", "A\x011"},
	}
	for _, c := range cases {
		if got := BatchRecordProperties([]byte(c.item), c.batch); got != c.want {
			t.Errorf("BatchRecordProperties(%q, %q) = %q", c.item, c.batch, got)
		}
	}
}

// TestAppendBatchRecords: the records of a batch as the broker stores
// them, in one allocation per batch once the slice has room.
func TestAppendBatchRecords(t *testing.T) {
	var body []byte
	body = AppendBatchItem(body, 1, []byte("one"), "UNIQ_KEY\x01A\x02TAGS\x01t")
	body = AppendBatchItem(body, 0, nil, "")
	body = AppendBatchItem(body, 9, bytes.Repeat([]byte{'z'}, 300), "UNIQ_KEY\x01B\x02")
	proto := Record{Topic: "T", QueueID: 2, SysFlag: 4, BornTimestamp: 5}
	recs, err := AppendBatchRecords(nil, body, "WAIT\x01true", &proto)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		flag  int32
		body  string
		props string
	}{
		{1, "one", "UNIQ_KEY\x01A\x02TAGS\x01t\x02WAIT\x01true"},
		{0, "", "WAIT\x01true"},
		{9, strings.Repeat("z", 300), "UNIQ_KEY\x01B\x02WAIT\x01true"},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records", len(recs))
	}
	for i, w := range want {
		r := recs[i]
		if r.Flag != w.flag || string(r.Body) != w.body || r.Properties != w.props || r.Topic != "T" ||
			r.QueueID != 2 || r.SysFlag != 4 || r.BornTimestamp != 5 {
			t.Errorf("record %d = %+v", i, r)
		}
	}
	if _, err := AppendBatchRecords(nil, body[:len(body)-1], "", &proto); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated batch: %v", err)
	}
	var big []byte
	for range 32 {
		big = AppendBatchItem(big, 0, make([]byte, 1024), "TAGS\x01a\x02UNIQ_KEY\x01C0A801021234FFFFFFFF0A4CB8030000")
	}
	buf := make([]Record, 0, 32)
	if n := testing.AllocsPerRun(50, func() {
		buf, _ = AppendBatchRecords(buf[:0], big, "WAIT\x01true\x02CLUSTER\x01c", &proto)
	}); n != 1 {
		t.Errorf("AppendBatchRecords of 32 items allocates %v times, want 1", n)
	}
}

func TestScannerNoCopyAllocs(t *testing.T) {
	img, _ := segmentImage(64*1024, manyRecords(200))
	var sc Scanner
	sc.NoCopy = true
	sc.CheckCRC = true
	if a := testing.AllocsPerRun(20, func() {
		sc.Reset(img)
		for sc.Next() {
		}
	}); a != 0 {
		t.Fatalf("scanning a segment allocates %v times", a)
	}
	h := netip.MustParseAddrPort("10.0.0.1:10911")
	dst := make([]byte, 0, 64)
	if a := testing.AllocsPerRun(100, func() { dst = AppendOffsetMsgID(dst[:0], h, 1<<40) }); a != 0 {
		t.Fatalf("AppendOffsetMsgID allocates %v times", a)
	}
}
