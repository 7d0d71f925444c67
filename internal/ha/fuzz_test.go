package ha

import (
	"bytes"
	"testing"
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
