package remoting

import (
	"bytes"
	"net"
	"testing"
)

// TestReadBufferHandOff: a frame handed off leaves in the buffer that
// held it, with its bytes intact; what followed it stays readable in a
// fresh buffer; with nothing after it the next read takes a buffer; and a
// frame followed by more than its body, or a buffer that is not pooled,
// is declined without consuming anything.
func TestReadBufferHandOff(t *testing.T) {
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	data := make([]byte, 9000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	go func() {
		_, _ = c2.Write(data)
		_, _ = c2.Write(data[:50])
	}()
	b := newReadBuffer(&activityReader{nc: c1}, nil, readBufferSize)
	defer b.close()
	if _, err := b.Peek(9000); err != nil {
		t.Fatal(err)
	}
	// 2,000 bytes follow a frame of 7,000: a body of 1,000 is cheaper to
	// copy than they are to move; one of 6,000 is not.
	if b.handOff(7000, 1000) {
		t.Fatal("handOff moved 2,000 bytes to save a copy of 1,000")
	}
	if b.Buffered() != 9000 {
		t.Fatalf("declined handOff consumed bytes: %d buffered", b.Buffered())
	}
	if !b.handOff(7000, 6000) {
		t.Fatal("handOff declined")
	}
	given := b.handedOff()
	if given == nil || !bytes.Equal((*given)[:7000], data[:7000]) || len(*given) != readBufferSize {
		t.Fatal("handed-off buffer does not hold the frame")
	}
	if got, err := b.Peek(2000); err != nil || !bytes.Equal(got, data[7000:]) {
		t.Fatalf("the rest after the hand-off: %v", err)
	}
	(*given)[0]++ // the reader no longer uses it
	putReadBuffer(given)
	if !b.handOff(2000, 1500) || b.buf != nil || b.Buffered() != 0 {
		t.Fatalf("handOff of the last frame: buffer %v, %d buffered", b.buf != nil, b.Buffered())
	}
	putReadBuffer(b.handedOff())
	if got, err := b.Peek(50); err != nil || !bytes.Equal(got, data[:50]) {
		t.Fatalf("read after handing off the whole buffer: %v", err)
	}
	small := newReadBuffer(&activityReader{nc: c1}, nil, 1024)
	small.buf, small.w = make([]byte, 1024), 100
	if small.handOff(100, 90) {
		t.Fatal("handOff of a buffer that is not pooled")
	}
}
