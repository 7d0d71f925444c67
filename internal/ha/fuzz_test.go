package ha

import (
	"bytes"
	"testing"

	"github.com/rocketd/rocketd/internal/store"
)

// FuzzDecodeHeader: any 12 bytes either decode to a header that encodes
// back to the same bytes, or are refused; nothing panics.
func FuzzDecodeHeader(f *testing.F) {
	f.Add(Header{Offset: 0, Size: 0}.AppendTo(nil))
	f.Add(Header{Offset: 1 << 30, Size: 32 << 10}.AppendTo(nil))
	f.Add(Header{Offset: -1, Size: 5}.AppendTo(nil))
	f.Add([]byte{1, 2, 3})
	f.Add(bytes.Repeat([]byte{0xff}, HeaderSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeHeader(b, DefaultMaxTransfer)
		if err != nil {
			return
		}
		if h.Offset < 0 || h.Size < 0 || h.Size > DefaultMaxTransfer {
			t.Fatalf("accepted %+v", h)
		}
		if got := h.AppendTo(nil); !bytes.Equal(got, b[:HeaderSize]) {
			t.Fatalf("re-encoded %x, input %x", got, b[:HeaderSize])
		}
	})
}

// FuzzDecodeSlaveFrame: a master reading any bytes from a slave either
// decodes a frame that encodes back to the same bytes or refuses them.
func FuzzDecodeSlaveFrame(f *testing.F) {
	f.Add(SlaveHandshake{SyncFromLastFile: true, BrokerID: 1}.AppendTo(nil))
	f.Add(appendSlaveReport(nil, 1<<30))
	f.Add([]byte{0, 0, 0, 2, 0xff})
	f.Add([]byte{0, 0, 0, 4})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, n, err := DecodeSlaveFrame(b)
		if err != nil {
			return
		}
		var enc []byte
		switch fr.State {
		case stateHandshake:
			enc = fr.Handshake.AppendTo(nil)
			// Flags other than 0 and 1 read as 0 (Java); compare the rest.
			if !bytes.Equal(enc[:4], b[:4]) || !bytes.Equal(enc[8:], b[8:n]) {
				t.Fatalf("handshake %+v from %x", fr.Handshake, b[:n])
			}
		case stateTransfer:
			if enc = appendSlaveReport(nil, fr.Offset); !bytes.Equal(enc, b[:n]) || fr.Offset < 0 {
				t.Fatalf("report %d from %x", fr.Offset, b[:n])
			}
		default:
			t.Fatalf("state %d accepted", fr.State)
		}
	})
}

// FuzzDecodeMasterHandshake: a slave reading any handshake either gets
// ordered entries that encode back to the same bytes, or refuses them.
func FuzzDecodeMasterHandshake(f *testing.F) {
	f.Add(MasterHandshake{MaxOffset: 1 << 20, LastEpoch: 2, Entries: []store.EpochEntry{{Epoch: 1}, {Epoch: 2, StartOffset: 4096}}}.AppendTo(nil))
	f.Add(MasterHandshake{LastEpoch: -1}.AppendTo(nil))
	f.Add(MasterHandshake{Entries: []store.EpochEntry{{Epoch: 2, StartOffset: 9}, {Epoch: 1}}}.AppendTo(nil))
	f.Add([]byte{0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xf4})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, size, err := DecodeMasterHandshakeHeader(b)
		if err != nil {
			return
		}
		if size < 0 || size%EpochEntrySize != 0 || size > MaxEpochEntries*EpochEntrySize {
			t.Fatalf("body size %d accepted", size)
		}
		body := b[MasterHandshakeSize:]
		if len(body) < size {
			return
		}
		h.Entries, err = DecodeEpochEntries(body[:size])
		if err != nil {
			return
		}
		for i, e := range h.Entries {
			if e.StartOffset < 0 || (i > 0 && (e.Epoch <= h.Entries[i-1].Epoch || e.StartOffset < h.Entries[i-1].StartOffset || h.Entries[i-1].EndOffset != e.StartOffset)) {
				t.Fatalf("entries %+v accepted", h.Entries)
			}
		}
		if got := h.AppendTo(nil); !bytes.Equal(got, b[:MasterHandshakeSize+size]) {
			t.Fatalf("re-encoded %x, input %x", got, b[:MasterHandshakeSize+size])
		}
	})
}

// FuzzDecodeTransferHeader: any 36 bytes either decode to a header that
// encodes back to the same bytes, or are refused.
func FuzzDecodeTransferHeader(f *testing.F) {
	f.Add(TransferHeader{Size: 32 << 10, Offset: 1 << 30, Epoch: 3, EpochStart: 1 << 29, ConfirmOffset: 1 << 30}.AppendTo(nil))
	f.Add(TransferHeader{Offset: -1, Epoch: 1}.AppendTo(nil))
	f.Add(TransferHeader{Size: 5, Offset: 3, EpochStart: 4}.AppendTo(nil))
	f.Add(bytes.Repeat([]byte{0xff}, TransferHeaderSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeTransferHeader(b, DefaultMaxTransfer)
		if err != nil {
			return
		}
		if h.Size < 0 || h.Size > DefaultMaxTransfer || (h.Offset < 0 && (h.Offset != -1 || h.Size != 0)) || (h.Size > 0 && h.EpochStart > h.Offset+int64(h.Size)) {
			t.Fatalf("accepted %+v", h)
		}
		if got := h.AppendTo(nil); !bytes.Equal(got, b[:TransferHeaderSize]) {
			t.Fatalf("re-encoded %x, input %x", got, b[:TransferHeaderSize])
		}
	})
}
