package message_test

import (
	"bytes"
	"maps"
	"net/netip"
	"strconv"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/rocketd/rocketd/internal/message"
)

// TestGoClientDecodesRecords feeds records from AppendRecord, back to back as
// in a pull response body, to the official Go client's decoder.
func TestGoClientDecodesRecords(t *testing.T) {
	hosts := []struct{ born, store string }{
		{"10.0.0.5:50123", "192.168.7.1:10911"},
		{"[2001:db8::5]:50123", "[2001:db8::1]:10911"},
		{"10.0.0.5:1", "[::1]:10911"},
	}
	var body []byte
	var want []message.Record
	for i, h := range hosts {
		props := map[string]string{
			message.PropertyTags:                      "TagA",
			message.PropertyKeys:                      "k" + strconv.Itoa(i),
			message.PropertyUniqClientMessageIDKeyIdx: "",
		}
		if i == 1 {
			props[message.PropertyUniqClientMessageIDKeyIdx] = "C0A80101000118B4AAC2173D7FD10000"
		}
		r := message.Record{
			QueueID: int32(i), Flag: 5, QueueOffset: int64(100 + i), PhysicalOffset: int64(len(body)),
			SysFlag: message.TransactionCommitType, BornTimestamp: 1700000000000 + int64(i),
			BornHost: netip.MustParseAddrPort(h.born), StoreTimestamp: 1700000000500,
			StoreHost: netip.MustParseAddrPort(h.store), ReconsumeTimes: int32(i), PreparedTransactionOffset: 77,
			Body: bytes.Repeat([]byte{byte('a' + i)}, 10*i+1), Topic: "TopicTest", Properties: message.EncodeProperties(props),
		}
		body = message.AppendRecord(body, &r)
		want = append(want, r)
	}
	got := primitive.DecodeMessage(body)
	if len(got) != len(want) {
		t.Fatalf("client decoded %d messages, want %d", len(got), len(want))
	}
	for i, m := range got {
		w := want[i]
		if m.Topic != w.Topic || !bytes.Equal(m.Body, w.Body) || m.Flag != w.Flag || m.Queue.QueueId != int(w.QueueID) ||
			m.QueueOffset != w.QueueOffset || m.CommitLogOffset != w.PhysicalOffset ||
			m.BornTimestamp != w.BornTimestamp || m.StoreTimestamp != w.StoreTimestamp ||
			m.ReconsumeTimes != w.ReconsumeTimes || m.PreparedTransactionOffset != w.PreparedTransactionOffset ||
			m.StoreSize != int32(w.Size()) || uint32(m.BodyCRC) != message.BodyCRC(w.Body) {
			t.Fatalf("message %d: client read %v", i, m)
		}
		if m.SysFlag != w.EncodedSysFlag() {
			t.Fatalf("message %d: sysflag %#x, want %#x", i, m.SysFlag, w.EncodedSysFlag())
		}
		if !maps.Equal(m.GetProperties(), message.ParseProperties(w.Properties)) {
			t.Fatalf("message %d: properties %v", i, m.GetProperties())
		}
		if m.OffsetMsgId != message.OffsetMsgID(w.StoreHost, w.PhysicalOffset) {
			t.Fatalf("message %d: client offset id %s, ours %s", i, m.OffsetMsgId, message.OffsetMsgID(w.StoreHost, w.PhysicalOffset))
		}
		if bornAddr, _ := netip.ParseAddrPort(normalizeHost(m.BornHost)); bornAddr != w.BornHost {
			t.Fatalf("message %d: born host %s, want %v", i, m.BornHost, w.BornHost)
		}
	}
}

// normalizeHost turns the client's "ip:port" (IPv6 without brackets) into a
// form netip parses.
func normalizeHost(s string) string {
	i := len(s) - 1
	for i >= 0 && s[i] != ':' {
		i--
	}
	ip := s[:i]
	if a, err := netip.ParseAddr(ip); err == nil && a.Is6() {
		return "[" + ip + "]" + s[i:]
	}
	return s
}

// TestDecodeGoClientBatch decodes the batch body the official Go producer
// builds for SEND_BATCH_MESSAGE.
func TestDecodeGoClientBatch(t *testing.T) {
	var msgs []*primitive.Message
	for i := range 4 {
		m := primitive.NewMessage("TopicTest", bytes.Repeat([]byte{'x'}, i*100))
		m.WithTag("TagA")
		m.WithKeys([]string{"key-" + strconv.Itoa(i)})
		m.Flag = int32(i)
		msgs = append(msgs, m)
	}
	body := producer.MarshalMessageBatch(msgs...)
	items, err := message.DecodeBatch(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != len(msgs) {
		t.Fatalf("%d items, want %d", len(items), len(msgs))
	}
	for i, it := range items {
		if it.Flag != msgs[i].Flag || !bytes.Equal(it.Body, msgs[i].Body) {
			t.Fatalf("item %d: flag %d body %d bytes", i, it.Flag, len(it.Body))
		}
		if !maps.Equal(message.ParseProperties(string(it.Properties)), msgs[i].GetProperties()) {
			t.Fatalf("item %d: properties %q, client had %v", i, it.Properties, msgs[i].GetProperties())
		}
	}
}

func TestOffsetMsgIDMatchesGoClient(t *testing.T) {
	for _, off := range []int64{0, 1, 1 << 32, 1<<62 + 12345} {
		want := primitive.CreateMessageId([]byte{10, 1, 2, 3}, 10911, off)
		if got := message.OffsetMsgID(netip.MustParseAddrPort("10.1.2.3:10911"), off); got != want {
			t.Fatalf("offset %d: %s, client %s", off, got, want)
		}
	}
}
