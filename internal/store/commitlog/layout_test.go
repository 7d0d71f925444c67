package commitlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/vfs"
)

// goldenRecord writes spec §5.1 field by field, independently of the codec.
func goldenRecord(topic string, qid, flag int32, queueOffset, physOffset int64, sysFlag int32,
	bornTS int64, born netip.AddrPort, storeTS int64, store netip.AddrPort, body []byte, props string) []byte {
	be := binary.BigEndian
	host := func(b []byte, h netip.AddrPort, v6 bool) []byte {
		if v6 {
			a := h.Addr().As16()
			b = append(b, a[:]...)
		} else {
			a := h.Addr().As4()
			b = append(b, a[:]...)
		}
		return be.AppendUint32(b, uint32(h.Port()))
	}
	bornV6, storeV6 := sysFlag&0x10 != 0, sysFlag&0x20 != 0
	size := 91 + len(body) + len(topic) + len(props)
	if bornV6 {
		size += 12
	}
	if storeV6 {
		size += 12
	}
	var b []byte
	b = be.AppendUint32(b, uint32(size))
	b = be.AppendUint32(b, 0xDAA320A7)
	b = be.AppendUint32(b, crc32.ChecksumIEEE(body)&0x7FFFFFFF)
	b = be.AppendUint32(b, uint32(qid))
	b = be.AppendUint32(b, uint32(flag))
	b = be.AppendUint64(b, uint64(queueOffset))
	b = be.AppendUint64(b, uint64(physOffset))
	b = be.AppendUint32(b, uint32(sysFlag))
	b = be.AppendUint64(b, uint64(bornTS))
	b = host(b, born, bornV6)
	b = be.AppendUint64(b, uint64(storeTS))
	b = host(b, store, storeV6)
	b = be.AppendUint32(b, 0) // reconsume times
	b = be.AppendUint64(b, 0) // prepared transaction offset
	b = be.AppendUint32(b, uint32(len(body)))
	b = append(b, body...)
	b = append(b, byte(len(topic)))
	b = append(b, topic...)
	b = be.AppendUint16(b, uint16(len(props)))
	b = append(b, props...)
	return b
}

func TestGoldenLayout(t *testing.T) {
	cases := []struct {
		name        string
		born, store netip.AddrPort
		sysFlag     int32 // expected stored sysflag
	}{
		{"v4/v4", netip.MustParseAddrPort("192.168.1.7:52000"), netip.MustParseAddrPort("10.0.0.1:10911"), 0},
		{"v6/v4", netip.MustParseAddrPort("[2001:db8::7]:52000"), netip.MustParseAddrPort("10.0.0.1:10911"), 0x10},
		{"v4/v6", netip.MustParseAddrPort("192.168.1.7:52000"), netip.MustParseAddrPort("[fd00::1]:10911"), 0x20},
		{"v6/v6", netip.MustParseAddrPort("[2001:db8::7]:52000"), netip.MustParseAddrPort("[fd00::1]:10911"), 0x30},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(vfs.NewMem(), true)
			cfg.StoreHost = c.store
			fixed := time.UnixMilli(1712345678901)
			cfg.Now = func() time.Time { return fixed }
			l := openLog(t, cfg)
			defer l.Close()
			var offsets []int64
			for i := 0; i < 3; i++ {
				r := &message.Record{Topic: "GoldenTopic", QueueID: 5, Flag: 7, BornTimestamp: 1712345670000,
					BornHost: c.born, Body: []byte("hello, rocket"), Properties: "TAGS\x01tagA\x02KEYS\x01k1"}
				res := l.Put(context.Background(), r, PutOptions{})
				if res.Status != PutOK {
					t.Fatal(res.Status)
				}
				offsets = append(offsets, res.WroteOffset)
				if res.StoreTimestamp != fixed.UnixMilli() || res.MsgNum != 1 {
					t.Fatalf("result %+v", res)
				}
				if res.MsgID != message.OffsetMsgID(c.store, res.WroteOffset) {
					t.Fatalf("msgId %s", res.MsgID)
				}
			}
			for i, off := range offsets {
				want := goldenRecord("GoldenTopic", 5, 7, int64(i), off, c.sysFlag, 1712345670000, c.born,
					fixed.UnixMilli(), c.store, []byte("hello, rocket"), "TAGS\x01tagA\x02KEYS\x01k1")
				buf, err := l.Read(off, int32(len(want)))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf.Bytes, want) {
					t.Fatalf("record %d:\n got %x\nwant %x", i, buf.Bytes, want)
				}
				if i+1 < len(offsets) && offsets[i+1] != off+int64(len(want)) {
					t.Fatalf("records not contiguous: %d then %d (size %d)", off, offsets[i+1], len(want))
				}
				buf.Release()
			}
		})
	}
}

func TestMsgIDFormatter(t *testing.T) {
	hosts := []netip.AddrPort{
		netip.MustParseAddrPort("127.0.0.1:10911"),
		netip.MustParseAddrPort("[2001:db8::1]:10911"),
		netip.MustParseAddrPort("[::ffff:10.0.0.1]:65535"),
		{},
	}
	for _, h := range hosts {
		f := newMsgIDFormatter(h)
		for _, off := range []int64{0, 1, 0xABCDEF, 1 << 40, -1, 1<<63 - 1} {
			if got, want := f.format(off), message.OffsetMsgID(h, off); got != want {
				t.Errorf("%v at %d: %s, want %s", h, off, got, want)
			}
		}
		// Ids share chunks: every id handed out stays intact while later
		// ones are carved (several chunks' worth, from two goroutines).
		ids := make([][]string, 2)
		var wg sync.WaitGroup
		for g := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 5 * idsPerChunk {
					ids[g] = append(ids[g], f.format(int64(g<<20+i)))
				}
			}()
		}
		wg.Wait()
		for g := range ids {
			for i, id := range ids[g] {
				if want := message.OffsetMsgID(h, int64(g<<20+i)); id != want {
					t.Fatalf("%v: id %d/%d became %s, want %s", h, g, i, id, want)
				}
			}
		}
	}
}
