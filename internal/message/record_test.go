package message

import (
	"bytes"
	"errors"
	"hash/crc32"
	"net/netip"
	"strings"
	"testing"
)

// golden builds a record by hand, field by field, straight from the table
// in spec §5.1, without any code of the encoder.
type golden struct{ b []byte }

func (g *golden) i32(v int32)   { g.b = append(g.b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v)) }
func (g *golden) i64(v int64)   { g.i32(int32(v >> 32)); g.i32(int32(v)) }
func (g *golden) raw(p ...byte) { g.b = append(g.b, p...) }

func sampleRecord() Record {
	return Record{
		QueueID:                   3,
		Flag:                      7,
		QueueOffset:               42,
		PhysicalOffset:            1 << 33,
		SysFlag:                   TransactionCommitType,
		BornTimestamp:             1700000000123,
		BornHost:                  netip.MustParseAddrPort("10.1.2.3:54321"),
		StoreTimestamp:            1700000000456,
		StoreHost:                 netip.MustParseAddrPort("192.168.0.9:10911"),
		ReconsumeTimes:            2,
		PreparedTransactionOffset: 4096,
		Body:                      []byte("hello, rocket"),
		Topic:                     "TopicTest",
		Properties:                "TAGS\x01TagA\x02KEYS\x01k1 k2\x02WAIT\x01true",
	}
}

func TestAppendRecordGoldenIPv4(t *testing.T) {
	r := sampleRecord()
	body, topic, props := r.Body, r.Topic, r.Properties
	total := 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 4 + 8 + 4 + len(body) + 1 + len(topic) + 2 + len(props)
	var g golden
	g.i32(int32(total))                                 // TOTALSIZE
	g.raw(0xDA, 0xA3, 0x20, 0xA7)                       // MAGICCODE v1
	g.i32(int32(crc32.ChecksumIEEE(body) & 0x7FFFFFFF)) // BODYCRC
	g.i32(3)                                            // QUEUEID
	g.i32(7)                                            // FLAG
	g.i64(42)                                           // QUEUEOFFSET
	g.i64(1 << 33)                                      // PHYSICALOFFSET
	g.i32(0x8)                                          // SYSFLAG: commit
	g.i64(1700000000123)                                // BORNTIMESTAMP
	g.raw(10, 1, 2, 3)                                  // BORNHOST address
	g.i32(54321)                                        // BORNHOST port
	g.i64(1700000000456)                                // STORETIMESTAMP
	g.raw(192, 168, 0, 9)                               // STOREHOST address
	g.i32(10911)                                        // STOREHOST port
	g.i32(2)                                            // RECONSUMETIMES
	g.i64(4096)                                         // PREPARED TRANSACTION OFFSET
	g.i32(int32(len(body)))                             // BODYLENGTH
	g.raw(body...)                                      // BODY
	g.raw(byte(len(topic)))                             // TOPICLENGTH
	g.raw([]byte(topic)...)                             // TOPIC
	g.raw(byte(len(props)>>8), byte(len(props)))        // PROPERTIESLENGTH
	g.raw([]byte(props)...)                             // PROPERTIES

	got := AppendRecord(nil, &r)
	if !bytes.Equal(got, g.b) {
		t.Fatalf("encoded record differs from the spec layout\n got %x\nwant %x", got, g.b)
	}
	if total != 91+len(body)+len(topic)+len(props) || r.Size() != total {
		t.Fatalf("size formula: total %d, Size() %d", total, r.Size())
	}
	// Useful fixed positions named by the spec.
	if RecordMagic(got) != MagicV1 || RecordQueueOffset(got) != 42 || RecordPhysicalOffset(got) != 1<<33 ||
		RecordSysFlag(got) != 8 || RecordStoreTimestamp(got) != 1700000000456 || RecordQueueID(got) != 3 ||
		RecordTotalSize(got) != int32(total) {
		t.Fatal("fixed-position readers disagree with the layout")
	}
}

func TestAppendRecordGoldenIPv6(t *testing.T) {
	r := sampleRecord()
	r.BornHost = netip.MustParseAddrPort("[2001:db8::1]:40000")
	r.StoreHost = netip.MustParseAddrPort("[fe80::2]:10911")
	r.SysFlag = 0
	body, topic, props := r.Body, r.Topic, r.Properties
	total := 91 + 12 + 12 + len(body) + len(topic) + len(props)
	var g golden
	g.i32(int32(total))
	g.raw(0xDA, 0xA3, 0x20, 0xA7)
	g.i32(int32(crc32.ChecksumIEEE(body) & 0x7FFFFFFF))
	g.i32(3)
	g.i32(7)
	g.i64(42)
	g.i64(1 << 33)
	g.i32(0x10 | 0x20) // both IPv6 bits, set by the encoder from the hosts
	g.i64(1700000000123)
	g.raw(0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)
	g.i32(40000)
	g.i64(1700000000456)
	g.raw(0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2)
	g.i32(10911)
	g.i32(2)
	g.i64(4096)
	g.i32(int32(len(body)))
	g.raw(body...)
	g.raw(byte(len(topic)))
	g.raw([]byte(topic)...)
	g.raw(byte(len(props)>>8), byte(len(props)))
	g.raw([]byte(props)...)

	got := AppendRecord(nil, &r)
	if !bytes.Equal(got, g.b) {
		t.Fatalf("encoded IPv6 record differs from the spec layout\n got %x\nwant %x", got, g.b)
	}
	if r.Size() != total {
		t.Fatalf("Size() = %d, want %d", r.Size(), total)
	}
	if StoreTimestampPos(RecordSysFlag(got)) != 68 || RecordStoreTimestamp(got) != 1700000000456 {
		t.Fatal("store timestamp position with an IPv6 born host must be 68")
	}
	dec, n, err := DecodeRecord(got, true)
	if err != nil || n != total {
		t.Fatalf("DecodeRecord = %d, %v", n, err)
	}
	if dec.BornHost != r.BornHost || dec.StoreHost != r.StoreHost {
		t.Fatalf("hosts = %v %v", dec.BornHost, dec.StoreHost)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	hosts := []netip.AddrPort{
		netip.MustParseAddrPort("127.0.0.1:10911"),
		netip.MustParseAddrPort("[::1]:9876"),
		netip.MustParseAddrPort("[::ffff:10.0.0.1]:1"), // IPv4-mapped: written as IPv4
	}
	for _, born := range hosts {
		for _, store := range hosts {
			for _, topicLen := range []int{0, 1, 127, 128, 300} {
				r := sampleRecord()
				r.BornHost, r.StoreHost = born, store
				r.Topic = strings.Repeat("t", topicLen)
				enc := AppendRecord([]byte("prefix"), &r)[len("prefix"):]
				if len(enc) != r.Size() {
					t.Fatalf("len %d, Size %d", len(enc), r.Size())
				}
				if wantV2 := topicLen > 127; (RecordMagic(enc) == MagicV2) != wantV2 {
					t.Fatalf("topic %d: magic %#x", topicLen, RecordMagic(enc))
				}
				for _, noCopy := range []bool{false, true} {
					dec, n, err := decodeRecord(enc, true, noCopy)
					if err != nil || n != len(enc) {
						t.Fatalf("decode: %d, %v", n, err)
					}
					if dec.Topic != r.Topic || dec.Properties != r.Properties || !bytes.Equal(dec.Body, r.Body) ||
						dec.QueueOffset != r.QueueOffset || dec.PhysicalOffset != r.PhysicalOffset ||
						dec.StoreTimestamp != r.StoreTimestamp || dec.BornTimestamp != r.BornTimestamp ||
						dec.QueueID != r.QueueID || dec.Flag != r.Flag || dec.ReconsumeTimes != r.ReconsumeTimes ||
						dec.PreparedTransactionOffset != r.PreparedTransactionOffset || dec.BodyCRC != BodyCRC(r.Body) {
						t.Fatalf("round trip mismatch:\n got %+v\nwant %+v", dec, r)
					}
					if dec.BornHost.Addr().Unmap() != born.Addr().Unmap() || dec.BornHost.Port() != born.Port() ||
						dec.StoreHost.Addr().Unmap() != store.Addr().Unmap() {
						t.Fatalf("hosts: got %v %v want %v %v", dec.BornHost, dec.StoreHost, born, store)
					}
					if re := AppendRecord(nil, &dec); !bytes.Equal(re, enc) {
						t.Fatal("re-encoding a decoded record changed its bytes")
					}
				}
			}
		}
	}
}

func TestPatchFields(t *testing.T) {
	for _, born := range []string{"1.2.3.4:5", "[::2]:5"} {
		r := sampleRecord()
		r.BornHost = netip.MustParseAddrPort(born)
		enc := AppendRecord(nil, &r)
		PatchQueueOffset(enc, 99)
		PatchPhysicalOffset(enc, 12345)
		PatchStoreTimestamp(enc, 777)
		dec, _, err := DecodeRecord(enc, true)
		if err != nil {
			t.Fatal(err)
		}
		if dec.QueueOffset != 99 || dec.PhysicalOffset != 12345 || dec.StoreTimestamp != 777 {
			t.Fatalf("patched fields: %+v", dec)
		}
		if dec.BornTimestamp != r.BornTimestamp || dec.StoreHost != r.StoreHost {
			t.Fatal("patching touched a neighbouring field")
		}
	}
}

func TestDecodeOutcomes(t *testing.T) {
	r := sampleRecord()
	enc := AppendRecord(nil, &r)
	blank := AppendBlank(nil, 1000)
	cases := []struct {
		name string
		b    []byte
		crc  bool
		want error
		n    int
	}{
		{"empty", nil, true, ErrTruncated, 0},
		{"short header", enc[:7], true, ErrTruncated, 0},
		{"torn record", enc[:len(enc)-1], true, ErrTruncated, 0},
		{"blank", blank, true, ErrBlank, BlankLen},
		{"zeros", make([]byte, 64), true, ErrZeroed, 0},
		{"bad magic", mutate(enc, PosMagic, 0x11), true, ErrCorrupt, 0},
		{"zero magic with size", mutate(enc, PosMagic, 0, 0, 0, 0), true, ErrCorrupt, 0},
		{"size below minimum", mutate(enc, 0, 0, 0, 0, 90), true, ErrCorrupt, 0},
		{"negative size", mutate(enc, 0, 0x80), true, ErrCorrupt, 0},
		{"body crc", mutate(enc, 88, 'H'), true, ErrCorrupt, 0},
		{"body crc unchecked", mutate(enc, 88, 'H'), false, nil, len(enc)},
		{"size formula", append(mutate(enc, 3, enc[3]+1), 0), true, ErrCorrupt, 0},
		{"negative body length", mutate(enc, 84, 0xFF), true, ErrCorrupt, 0},
		{"topic length negative", mutate(enc, 88+len(r.Body), 0x80), true, ErrCorrupt, 0},
		{"v6 flag without room", mutate(enc, 39, byte(RecordSysFlag(enc)|0x30)), false, ErrCorrupt, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, n, err := DecodeRecord(tc.b, tc.crc)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if n != tc.n {
				t.Fatalf("n = %d, want %d", n, tc.n)
			}
		})
	}
}

// mutate returns a copy of b with bytes overwritten at pos.
func mutate(b []byte, pos int, v ...byte) []byte {
	c := bytes.Clone(b)
	copy(c[pos:], v)
	return c
}

func TestCheckLimits(t *testing.T) {
	if err := CheckLimits(127, 32767); err != nil {
		t.Fatal(err)
	}
	if err := CheckLimits(128, 0); !errors.Is(err, ErrTopicTooLong) {
		t.Fatal(err)
	}
	if err := CheckLimits(1, 32768); !errors.Is(err, ErrPropertiesTooLong) {
		t.Fatal(err)
	}
}

func TestAppendRecordAllocs(t *testing.T) {
	r := sampleRecord()
	r.Body = bytes.Repeat([]byte{1}, 1024)
	dst := make([]byte, 0, 4096)
	if a := testing.AllocsPerRun(100, func() { dst = AppendRecord(dst[:0], &r) }); a != 0 {
		t.Fatalf("AppendRecord allocates %v times per call", a)
	}
	enc := AppendRecord(nil, &r)
	if a := testing.AllocsPerRun(100, func() { _, _, _ = DecodeRecordNoCopy(enc, true) }); a != 0 {
		t.Fatalf("DecodeRecordNoCopy allocates %v times per call", a)
	}
	if a := testing.AllocsPerRun(100, func() { _, _, _ = DecodeRecord(enc, true) }); a != 1 {
		t.Fatalf("DecodeRecord allocates %v times per call, want 1", a)
	}
}
