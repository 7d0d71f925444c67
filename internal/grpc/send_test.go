package grpc

import (
	"testing"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
)

// TestConsistentHash checks Guava's contract: a key moves only to the new
// bucket when one is added, and stays in range.
func TestConsistentHash(t *testing.T) {
	for key := int64(-500); key < 500; key++ {
		prev := consistentHash(key*7919, 1)
		if prev != 0 {
			t.Fatalf("key %d: %d buckets of 1", key, prev)
		}
		for n := 2; n <= 64; n++ {
			got := consistentHash(key*7919, n)
			if got < 0 || got >= n {
				t.Fatalf("key %d: bucket %d of %d", key, got, n)
			}
			if got != prev && got != n-1 {
				t.Fatalf("key %d: moved from %d to %d when bucket %d was added", key, prev, got, n-1)
			}
			prev = got
		}
	}
}

// TestConsistentHashJava: the queues Guava 32's
// Hashing.consistentHash(group.hashCode(), n) picks (computed with the
// guava jar the RocketMQ 5.2.0 distribution ships).
func TestConsistentHashJava(t *testing.T) {
	for _, v := range []struct {
		group   string
		buckets int
		want    int
	}{
		{"order-42", 1, 0},
		{"order-42", 2, 0},
		{"order-42", 4, 3},
		{"order-42", 8, 3},
		{"order-42", 16, 10},
		{"order-42", 100, 25},
		{"g1", 1, 0},
		{"g1", 2, 0},
		{"g1", 4, 0},
		{"g1", 8, 6},
		{"g1", 16, 9},
		{"g1", 100, 41},
		{"", 1, 0},
		{"", 2, 0},
		{"", 4, 0},
		{"", 8, 0},
		{"", 16, 0},
		{"", 100, 0},
		{"订单-7", 1, 0},
		{"订单-7", 2, 0},
		{"订单-7", 4, 0},
		{"订单-7", 8, 4},
		{"订单-7", 16, 15},
		{"订单-7", 100, 84},
		{"a-much-longer-message-group-name-0123456789", 1, 0},
		{"a-much-longer-message-group-name-0123456789", 2, 0},
		{"a-much-longer-message-group-name-0123456789", 4, 2},
		{"a-much-longer-message-group-name-0123456789", 8, 2},
		{"a-much-longer-message-group-name-0123456789", 16, 15},
		{"a-much-longer-message-group-name-0123456789", 100, 43},
	} {
		if got := consistentHash(int64(message.JavaHash(v.group)), v.buckets); got != v.want {
			t.Errorf("consistentHash(%q.hashCode(), %d) = %d, Java %d", v.group, v.buckets, got, v.want)
		}
	}
}

func TestCheckMessageType(t *testing.T) {
	normal := msgKind{}
	fifo := msgKind{fifo: true}
	delay := msgKind{delay: true}
	txn := msgKind{transaction: true, fifo: true}
	for _, tc := range []struct {
		topic string
		kind  msgKind
		ok    bool
	}{
		{protocol.MessageTypeNormal, normal, true},
		{protocol.MessageTypeNormal, fifo, false},
		{protocol.MessageTypeFIFO, fifo, true},
		{protocol.MessageTypeFIFO, normal, false},
		{protocol.MessageTypeDelay, delay, true},
		{protocol.MessageTypeTransaction, txn, true}, // TRAN_MSG wins over the group
		{protocol.MessageTypeMixed, delay, true},
		{protocol.MessageTypeUnspecified, normal, false},
	} {
		st := checkMessageType(tc.topic, tc.kind)
		if (st == nil) != tc.ok || st != nil && st.Code != v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE {
			t.Errorf("topic %s kind %+v: status %v, want ok=%v", tc.topic, tc.kind, st, tc.ok)
		}
	}
}

func TestParseTransactionID(t *testing.T) {
	id := transactionID("7F00000100002A9F0000000000001234", 42)
	clo, qo, ok := parseTransactionID(id)
	if !ok || clo != 0x1234 || qo != 42 {
		t.Fatalf("%s: %d %d %v", id, clo, qo, ok)
	}
	for _, bad := range []string{"", "abc", "7F00000100002A9F0000000000001234", "zz-1", "7F00000100002A9F0000000000001234-x"} {
		if _, _, ok := parseTransactionID(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestSystemProperty: Java's STRING_HASH_SET, not every MessageConst key.
func TestSystemProperty(t *testing.T) {
	for k, want := range map[string]bool{
		"TAGS": true, "UNIQ_KEY": true, "TIMER_OUT_MS": true, "TIMER_DELAY_LEVEL": true, "__CRC32#": true,
		"__SHARDINGKEY": false, "TRACE_CONTEXT": false, "TRANSACTION_CHECK_TIMES": false, "k": false,
	} {
		if systemProperty(k) != want {
			t.Errorf("systemProperty(%q) = %v", k, !want)
		}
	}
}
