package message

import (
	"bytes"
	"encoding/binary"
	"errors"
	"maps"
	"net/netip"
	"strings"
	"testing"
)

// seedRecords are valid, empty, truncated and maximal-ish inputs for the
// record fuzzers.
func seedRecords(f *testing.F) {
	r := sampleRecord()
	enc := AppendRecord(nil, &r)
	f.Add(enc)
	f.Add(enc[:len(enc)/2])
	f.Add([]byte{})
	f.Add(AppendBlank(nil, 4096))
	f.Add(make([]byte, 16))
	v6 := sampleRecord()
	v6.BornHost = netip.MustParseAddrPort("[::1]:1")
	v6.StoreHost = netip.MustParseAddrPort("[fe80::1]:2")
	f.Add(AppendRecord(bytes.Clone(enc), &v6))
	long := sampleRecord()
	long.Topic = strings.Repeat("T", 200)
	long.Body = bytes.Repeat([]byte{0xEE}, 5000)
	f.Add(AppendRecord(nil, &long))
	empty := Record{}
	f.Add(AppendBlank(AppendRecord(nil, &empty), 100))
}

// FuzzDecodeRecord: never panics, never claims more than it was given, and
// a record accepted with the CRC checked re-encodes to the same bytes when
// it is canonical (ports in range, v2 magic exactly for long topics).
func FuzzDecodeRecord(f *testing.F) {
	seedRecords(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, crc := range []bool{false, true} {
			rec, n, err := DecodeRecord(b, crc)
			if n < 0 || n > len(b) {
				t.Fatalf("consumed %d of %d", n, len(b))
			}
			if err != nil {
				if !errors.Is(err, ErrBlank) && !errors.Is(err, ErrZeroed) && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrCorrupt) {
					t.Fatalf("unclassified error %v", err)
				}
				if (n != 0) != errors.Is(err, ErrBlank) {
					t.Fatalf("error %v with n = %d", err, n)
				}
				continue
			}
			if n != int(RecordTotalSize(b)) || n < MinRecordSize {
				t.Fatalf("n = %d, TOTALSIZE %d", n, RecordTotalSize(b))
			}
			nc, n2, err2 := DecodeRecordNoCopy(b, crc)
			if err2 != nil || n2 != n || nc.Topic != rec.Topic || nc.Properties != rec.Properties {
				t.Fatal("DecodeRecordNoCopy disagrees with DecodeRecord")
			}
			// Re-decoding the accepted prefix alone gives the same record.
			again, n3, err3 := DecodeRecord(b[:n], crc)
			if err3 != nil || n3 != n || again.Topic != rec.Topic || !bytes.Equal(again.Body, rec.Body) {
				t.Fatal("decoding the record's own bytes differs")
			}
			if !canonicalRecord(b[:n], &rec) {
				continue
			}
			want := b[:n]
			if !crc {
				// Random bytes rarely carry a valid CRC: fix it, so the
				// round trip is checked on every accepted layout.
				want = bytes.Clone(want)
				binary.BigEndian.PutUint32(want[PosBodyCRC:], BodyCRC(rec.Body))
				if rec, _, err = DecodeRecord(want, true); err != nil {
					t.Fatalf("record with its CRC fixed rejected: %v", err)
				}
			}
			if re := AppendRecord(nil, &rec); !bytes.Equal(re, want) {
				t.Fatalf("re-encode differs\n got %x\nwant %x", re, want)
			}
		}
	})
}

// canonicalRecord reports whether enc is what AppendRecord would write for
// the decoded rec: ports fit 16 bits and the magic matches the topic length.
func canonicalRecord(enc []byte, rec *Record) bool {
	if (RecordMagic(enc) == MagicV2) != (len(rec.Topic) > MaxTopicLenV1) {
		return false
	}
	pos := PosBornHost + 4
	if rec.SysFlag&SysFlagBornHostV6 != 0 {
		pos += 12
	}
	if binary.BigEndian.Uint32(enc[pos:]) > 0xFFFF {
		return false
	}
	pos += 4 + 8 + 4
	if rec.SysFlag&SysFlagStoreHostV6 != 0 {
		pos += 12
	}
	return binary.BigEndian.Uint32(enc[pos:]) <= 0xFFFF
}

// FuzzScanner: scanning a buffer whole or through a window that stops at an
// arbitrary point (then resumes from Pos, as recovery reading a segment in
// chunks does) finds the same records and stops at the same place.
func FuzzScanner(f *testing.F) {
	recs := manyRecords(6)
	var img []byte
	for i := range recs {
		img = AppendRecord(img, &recs[i])
	}
	f.Add(img, uint16(100))
	f.Add(append(bytes.Clone(img), make([]byte, 40)...), uint16(7))
	f.Add(AppendBlank(bytes.Clone(img), 64), uint16(1000))
	f.Add(img[:len(img)-9], uint16(250))
	f.Fuzz(func(t *testing.T, b []byte, cut uint16) {
		whole := NewScanner(b, true)
		var offs []int
		for whole.Next() {
			offs = append(offs, whole.Offset())
			if whole.Pos() > len(b) || whole.Offset()+whole.Size() != whole.Pos() {
				t.Fatal("positions out of range")
			}
		}
		if whole.Pos() > len(b) {
			t.Fatal("Pos past the buffer")
		}
		split := int(cut) % (len(b) + 1)
		var got []int
		part := NewScanner(b[:split], true)
		for part.Next() {
			got = append(got, part.Offset())
		}
		base := part.Pos()
		if part.Err() == nil || errors.Is(part.Err(), ErrTruncated) {
			rest := NewScanner(b[base:], true)
			for rest.Next() {
				got = append(got, base+rest.Offset())
			}
			base += rest.Pos()
			if (rest.Err() == nil) != (whole.Err() == nil) {
				t.Fatalf("outcome %v, whole %v", rest.Err(), whole.Err())
			}
		}
		if len(got) != len(offs) || base != whole.Pos() {
			t.Fatalf("two halves found %d records ending at %d, whole %d ending at %d", len(got), base, len(offs), whole.Pos())
		}
		for i := range got {
			if got[i] != offs[i] {
				t.Fatalf("record %d at %d vs %d", i, got[i], offs[i])
			}
		}
	})
}

// FuzzDecodeBatch: never panics; accepted items tile the body exactly and
// re-encode to it when MAGICCODE and BODYCRC are zero (as clients send).
func FuzzDecodeBatch(f *testing.F) {
	var body []byte
	body = AppendBatchItem(body, 1, []byte("one"), "UNIQ_KEY\x01A")
	body = AppendBatchItem(body, 2, nil, "")
	f.Add(body)
	f.Add(body[:len(body)-2])
	f.Add([]byte{})
	f.Add(AppendBatchItem(nil, -1, bytes.Repeat([]byte{9}, 1000), strings.Repeat("k\x01v\x02", 50)))
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := DecodeBatch(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || items != nil {
				t.Fatalf("error %v with %d items", err, len(items))
			}
			return
		}
		var re []byte
		zeroed := true
		pos := 0
		for _, it := range items {
			if binary.BigEndian.Uint64(b[pos+4:]) != 0 {
				zeroed = false
			}
			re = AppendBatchItem(re, it.Flag, it.Body, string(it.Properties))
			pos = len(re)
		}
		if len(re) != len(b) {
			t.Fatalf("items cover %d of %d bytes", len(re), len(b))
		}
		if zeroed && !bytes.Equal(re, b) {
			t.Fatal("re-encoded batch differs")
		}
	})
}

// FuzzAppendBatchRecords: AppendBatchRecords accepts exactly what
// DecodeBatch accepts and gives each item the flag, body and stored
// property string (BatchRecordProperties) the per-item path gives, after
// the records already in the slice, which it never changes.
func FuzzAppendBatchRecords(f *testing.F) {
	var body []byte
	body = AppendBatchItem(body, 1, []byte("one"), "UNIQ_KEY\x01A")
	body = AppendBatchItem(body, 2, nil, "")
	body = AppendBatchItem(body, 3, []byte("three"), "TAGS\x01t\x02")
	f.Add(body, "WAIT\x01true\x02CLUSTER\x01c", 1)
	f.Add(body[:len(body)-2], "", 0)
	f.Add([]byte{}, "x", 2)
	f.Add(AppendBatchItem(nil, -1, bytes.Repeat([]byte{9}, 1000), strings.Repeat("k\x01v\x02", 50)), "", 0)
	f.Fuzz(func(t *testing.T, b []byte, batchProps string, before int) {
		before = min(max(before, 0), 3)
		proto := Record{Topic: "T", QueueID: 3, BornTimestamp: 7}
		prior := make([]Record, before, before+1)
		for i := range prior {
			prior[i] = Record{Topic: "prior", Flag: int32(i)}
		}
		recs, err := AppendBatchRecords(prior, b, batchProps, &proto)
		items, derr := DecodeBatch(b)
		if (err == nil) != (derr == nil) {
			t.Fatalf("AppendBatchRecords error %v, DecodeBatch error %v", err, derr)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || len(recs) != before {
				t.Fatalf("error %v with %d records (%d before)", err, len(recs), before)
			}
			return
		}
		if len(recs) != before+len(items) {
			t.Fatalf("%d records, want %d + %d", len(recs), before, len(items))
		}
		for i := range before {
			if recs[i].Topic != "prior" || recs[i].Flag != int32(i) {
				t.Fatalf("record %d before the batch changed: %+v", i, recs[i])
			}
		}
		for i, it := range items {
			r := recs[before+i]
			want := BatchRecordProperties(it.Properties, batchProps)
			if r.Flag != it.Flag || !bytes.Equal(r.Body, it.Body) || r.Properties != want ||
				r.Topic != proto.Topic || r.QueueID != proto.QueueID || r.BornTimestamp != proto.BornTimestamp {
				t.Fatalf("record %d = flag %d body %q props %q, want flag %d body %q props %q",
					i, r.Flag, r.Body, r.Properties, it.Flag, it.Body, want)
			}
		}
	})
}

// FuzzProperties: the parser's entries are well formed, lookups agree with
// the map, and encode(parse(s)) parses back to the same map.
func FuzzProperties(f *testing.F) {
	f.Add("TAGS\x01TagA\x02KEYS\x01k1 k2\x02UNIQ_KEY\x01C0A8")
	f.Add("TAGS\x01TagA\x02")
	f.Add("")
	f.Add("\x01\x02\x02a\x01\x01b\x02a\x01c")
	f.Add("中文\x01値\x02DELAY\x013")
	f.Fuzz(func(t *testing.T, s string) {
		m := ParseProperties(s)
		for k, v := range m {
			if k == "" || v == "" || strings.ContainsRune(k, NameValueSeparator) ||
				strings.ContainsRune(k, PropertySeparator) || strings.ContainsRune(v, PropertySeparator) {
				t.Fatalf("malformed entry %q=%q", k, v)
			}
			if got, ok := Property(s, k); !ok || got != v {
				t.Fatalf("Property(%q) = %q %v, map has %q", k, got, ok, v)
			}
		}
		enc := EncodeProperties(m)
		if back := ParseProperties(enc); !maps.Equal(back, m) {
			t.Fatalf("encode/parse changed the map: %q -> %q", m, back)
		}
		for k := range m {
			del := ParseProperties(DeleteProperty(s, k))
			want := maps.Clone(m)
			delete(want, k)
			if !maps.Equal(del, want) {
				t.Fatalf("DeleteProperty(%q): %q, want %q", k, del, want)
			}
			set := ParseProperties(SetProperty(s, k, "v"))
			want[k] = "v"
			if !maps.Equal(set, want) {
				t.Fatalf("SetProperty(%q): %q, want %q", k, set, want)
			}
			break
		}
	})
}
