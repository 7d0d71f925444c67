package ha

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/store"
)

// unhex reads a hex dump with spaces between fields.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every AutoSwitch frame byte by byte, against apache/rocketmq
// rocketmq-all-5.2.0 (unchanged on the 2025-09 develop branch), store/src/
// main/java/org/apache/rocketmq/store/ha/:
//
//   - HAConnectionState.java: the enum order READY, HANDSHAKE, TRANSFER,
//     SUSPEND, SHUTDOWN; frames carry ordinal(): HANDSHAKE 1, TRANSFER 2.
//   - autoswitch/AutoSwitchHAClient.java:68 HANDSHAKE_HEADER_SIZE = 4+4+8,
//     :103 TRANSFER_HEADER_SIZE = 4+8; sendHandshakeHeader :290-306
//     (putInt state, putShort isSyncFromLastFile, putShort isAsyncLearner,
//     putLong brokerId); reportSlaveOffset :322-329 (putInt state,
//     putLong offset); the slave reads the master's header at :488-498
//     (state +0, bodySize +4, offset +8, epoch +16, epochStartOffset +20,
//     confirmOffset +28) and the entries at :522-526 (getInt epoch,
//     getLong startOffset, 12 bytes apart).
//   - autoswitch/AutoSwitchHAConnection.java:56 HANDSHAKE_HEADER_SIZE =
//     4+4+8+4, :71 TRANSFER_HEADER_SIZE = that+8+8, :72 EPOCH_ENTRY_SIZE =
//     12; the master reads the slave at :311-340 (state +0; handshake:
//     isSyncFromLastFile at 16-12, isAsyncLearner at 16-10, brokerId at
//     16-8; report: offset at +4); buildHandshakeBuffer :476-504 (putInt
//     state, putInt entries*12, putLong maxPhyOffset, putInt lastEpoch,
//     then putInt epoch + putLong startOffset per entry);
//     buildTransferHeaderBuffer :519-553 (putInt state, putInt bodySize,
//     putLong offset, putInt epoch, putLong epochStartOffset, putLong
//     confirmOffset); the epoch boundary cut :596-608.
func TestAutoSwitchFrameBytes(t *testing.T) {
	for _, c := range []struct {
		name string
		got  []byte
		want string
	}{
		{"slave handshake", SlaveHandshake{SyncFromLastFile: true, AsyncLearner: false, BrokerID: 0x0102030405060708}.AppendTo(nil),
			"00000001 0001 0000 0102030405060708"},
		{"slave handshake, learner", SlaveHandshake{AsyncLearner: true, BrokerID: 2}.AppendTo(nil),
			"00000001 0000 0001 0000000000000002"},
		{"slave report", appendSlaveReport(nil, 0x1122334455667788),
			"00000002 1122334455667788"},
		{"master handshake", MasterHandshake{MaxOffset: 0x0A0B0C0D, LastEpoch: 3, Entries: []store.EpochEntry{
			{Epoch: 1, StartOffset: 0}, {Epoch: 3, StartOffset: 0x1000}}}.AppendTo(nil),
			"00000001 00000018 000000000A0B0C0D 00000003" +
				"00000001 0000000000000000" + "00000003 0000000000001000"},
		{"master handshake, no epochs", MasterHandshake{MaxOffset: 0, LastEpoch: -1}.AppendTo(nil),
			"00000001 00000000 0000000000000000 FFFFFFFF"},
		{"transfer header", TransferHeader{Size: 0x8000, Offset: 0x40000000, Epoch: 7, EpochStart: 0x3FFF0000, ConfirmOffset: 0x3FFFFF00}.AppendTo(nil),
			"00000002 00008000 0000000040000000 00000007 000000003FFF0000 000000003FFFFF00"},
		{"heartbeat", TransferHeader{Offset: 5, Epoch: 1, ConfirmOffset: 5}.AppendTo(nil),
			"00000002 00000000 0000000000000005 00000001 0000000000000000 0000000000000005"},
	} {
		if want := unhex(t, c.want); !bytes.Equal(c.got, want) {
			t.Errorf("%s:\n got %x\nwant %x", c.name, c.got, want)
		}
	}
	if SlaveHandshakeSize != 16 || SlaveReportSize != 12 || MasterHandshakeSize != 20 || TransferHeaderSize != 36 || EpochEntrySize != 12 {
		t.Fatal("frame sizes differ from Java's")
	}
}

// The decoders read Java's bytes back, refuse the impossible, and round
// trip what they accept.
func TestAutoSwitchDecode(t *testing.T) {
	f, n, err := DecodeSlaveFrame(unhex(t, "00000001 0001 0001 0000000000000009 ff"))
	if err != nil || n != 16 || f.State != stateHandshake || f.Handshake != (SlaveHandshake{SyncFromLastFile: true, AsyncLearner: true, BrokerID: 9}) {
		t.Fatalf("handshake %+v %d %v", f, n, err)
	}
	// Java takes a flag as set only when it is 1.
	if f, _, _ := DecodeSlaveFrame(unhex(t, "00000001 0002 0000 0000000000000009")); f.Handshake.SyncFromLastFile {
		t.Fatal("flag 2 read as set")
	}
	f, n, err = DecodeSlaveFrame(unhex(t, "00000002 0000000000001234"))
	if err != nil || n != 12 || f.State != stateTransfer || f.Offset != 0x1234 {
		t.Fatalf("report %+v %d %v", f, n, err)
	}
	for _, bad := range []string{"", "000000", "00000000 0000000000000000", "00000003 0000000000000000", "00000002 FFFFFFFFFFFFFFFF", "00000001 0000 0000 00000000"} {
		if _, _, err := DecodeSlaveFrame(unhex(t, bad)); !errors.Is(err, ErrBadFrame) {
			t.Errorf("slave frame %q: %v, want ErrBadFrame", bad, err)
		}
	}
	h, size, err := DecodeMasterHandshakeHeader(unhex(t, "00000001 00000018 0000000000000100 00000003"))
	if err != nil || size != 24 || h.MaxOffset != 256 || h.LastEpoch != 3 {
		t.Fatalf("master handshake %+v %d %v", h, size, err)
	}
	for _, bad := range []string{"00000002 00000000 0000000000000000 00000001", "00000001 0000000D 0000000000000000 00000001",
		"00000001 FFFFFFF4 0000000000000000 00000001", "00000001 00000000 FFFFFFFFFFFFFFFE 00000001"} {
		if _, _, err := DecodeMasterHandshakeHeader(unhex(t, bad)); !errors.Is(err, ErrBadFrame) {
			t.Errorf("master handshake %q: %v, want ErrBadFrame", bad, err)
		}
	}
	es, err := DecodeEpochEntries(unhex(t, "00000001 0000000000000000 00000004 0000000000000400"))
	if err != nil || len(es) != 2 || es[0] != (store.EpochEntry{Epoch: 1, StartOffset: 0, EndOffset: 0x400}) || es[1] != (store.EpochEntry{Epoch: 4, StartOffset: 0x400, EndOffset: maxEnd}) {
		t.Fatalf("entries %+v %v", es, err)
	}
	for _, bad := range []string{"00000002 0000000000000000 00000001 0000000000000010", "00000001 0000000000000010 00000002 0000000000000008", "00000001 8000000000000000", "000000010000"} {
		if _, err := DecodeEpochEntries(unhex(t, bad)); !errors.Is(err, ErrBadFrame) {
			t.Errorf("entries %q: %v, want ErrBadFrame", bad, err)
		}
	}
	// Java names the next epoch on an epoch's last bytes: it starts at their end.
	if _, err := DecodeTransferHeader(unhex(t, "00000002 00000010 0000000000000010 00000002 0000000000000020 0000000000000000"), 1<<20); err != nil {
		t.Fatalf("epoch starting at the data's end: %v", err)
	}
	// A Java master's heartbeat before it knows where to start.
	if h, err := DecodeTransferHeader(unhex(t, "00000002 00000000 FFFFFFFFFFFFFFFF 00000001 0000000000000000 0000000000000000"), 1<<20); err != nil || h.Offset != -1 {
		t.Fatalf("heartbeat at -1: %+v %v", h, err)
	}
	for _, bad := range []string{
		"00000001 00000000 0000000000000000 00000001 0000000000000000 0000000000000000", // handshake state
		"00000002 00100001 0000000000000000 00000001 0000000000000000 0000000000000000", // above max
		"00000002 00000010 FFFFFFFFFFFFFFFF 00000001 0000000000000000 0000000000000000", // data at -1
		"00000002 00000010 0000000000000010 00000001 0000000000000021 0000000000000000", // epoch starts after the data's end
	} {
		if _, err := DecodeTransferHeader(unhex(t, bad), 1<<20); !errors.Is(err, ErrBadFrame) {
			t.Errorf("transfer header %q: %v, want ErrBadFrame", bad, err)
		}
	}
}
