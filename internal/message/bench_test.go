package message

import (
	"bytes"
	"net/netip"
	"testing"
)

func bench1KRecord() Record {
	r := sampleRecord()
	r.Body = bytes.Repeat([]byte("0123456789abcdef"), 64)
	r.Properties = "UNIQ_KEY\x017F0000010001000000000000000000A1\x02TAGS\x01TagA\x02KEYS\x01order-1 order-2\x02WAIT\x01true\x02CLUSTER\x01DefaultCluster"
	return r
}

func BenchmarkAppendRecord1K(b *testing.B) {
	r := bench1KRecord()
	dst := make([]byte, 0, 2048)
	b.SetBytes(int64(r.Size()))
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendRecord(dst[:0], &r)
	}
}

// BenchmarkAppendRecord1KPrecomputedCRC is the put path when the CRC was
// computed outside the commit-log lock: encoding alone.
func BenchmarkAppendRecord1KPrecomputedCRC(b *testing.B) {
	r := bench1KRecord()
	r.BodyCRC = BodyCRC(r.Body)
	dst := make([]byte, 0, 2048)
	b.SetBytes(int64(r.Size()))
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendRecord(dst[:0], &r)
	}
}

func BenchmarkDecodeRecord1K(b *testing.B) {
	r := bench1KRecord()
	enc := AppendRecord(nil, &r)
	for _, bc := range []struct {
		name     string
		crc, cpy bool
	}{{"copy/crc", true, true}, {"nocopy/crc", true, false}, {"nocopy/nocrc", false, false}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(enc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := decodeRecord(enc, bc.crc, !bc.cpy); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkScanSegment scans 1 MiB of 1 KiB records without CRC checks and
// without copies: the dispatcher's inner loop.
func BenchmarkScanSegment(b *testing.B) {
	r := bench1KRecord()
	var img []byte
	for len(img) < 1<<20 {
		img = AppendRecord(img, &r)
	}
	b.SetBytes(int64(len(img)))
	b.ReportAllocs()
	var sc Scanner
	sc.NoCopy = true
	for b.Loop() {
		sc.Reset(img)
		for sc.Next() {
		}
		if sc.Err() != nil {
			b.Fatal(sc.Err())
		}
	}
}

func BenchmarkProperty(b *testing.B) {
	props := bench1KRecord().Properties
	for _, key := range []string{PropertyTags, PropertyUniqClientMessageIDKeyIdx, PropertyDelayTimeLevel} {
		b.Run(key, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = Property(props, key)
			}
		})
	}
}

func BenchmarkParseProperties(b *testing.B) {
	props := bench1KRecord().Properties
	b.ReportAllocs()
	for b.Loop() {
		_ = ParseProperties(props)
	}
}

func BenchmarkTagsCode(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = TagsCode("TagA-order-created")
	}
}

func BenchmarkAppendOffsetMsgID(b *testing.B) {
	h := netip.MustParseAddrPort("10.0.0.1:10911")
	dst := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendOffsetMsgID(dst[:0], h, 1<<35)
	}
}

// BenchmarkBatchRecords turns a SEND_BATCH_MESSAGE body of 32 x 1 KiB
// into the records to store: per item (DecodeBatch, then a record and a
// property string per item, the send path before) and once
// (AppendBatchRecords into a reused slice). ns/op and allocs are per batch.
func BenchmarkBatchRecords(b *testing.B) {
	var body []byte
	for range 32 {
		body = AppendBatchItem(body, 0, bytes.Repeat([]byte("x"), 1024), "TAGS\x01a\x02UNIQ_KEY\x01C0A801021234FFFFFFFF0A4CB8030000")
	}
	const batchProps = "WAIT\x01true\x02CLUSTER\x01DefaultCluster\x02TRACE_ON\x01true"
	proto := Record{Topic: "Bench", QueueID: 1, BornTimestamp: 1}
	b.Run("per-item", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			items, err := DecodeBatch(body)
			if err != nil {
				b.Fatal(err)
			}
			recs := make([]Record, len(items))
			for i, it := range items {
				r := proto
				r.Flag, r.Body = it.Flag, it.Body
				r.Properties = BatchRecordProperties(it.Properties, batchProps)
				recs[i] = r
			}
		}
	})
	b.Run("once", func(b *testing.B) {
		b.ReportAllocs()
		recs := make([]Record, 0, 32)
		for b.Loop() {
			var err error
			if recs, err = AppendBatchRecords(recs[:0], body, batchProps, &proto); err != nil {
				b.Fatal(err)
			}
		}
	})
}
