package protocol

import "testing"

func TestTimerCheckpointCodec(t *testing.T) {
	c := TimerCheckpoint{1, -2, 3, 4, 5, 6, 7}
	b := c.Encode()
	if len(b) != TimerCheckpointLen || b[7] != 1 || b[8] != 0xff || b[55] != 7 {
		t.Fatalf("encoded % x", b)
	}
	got, err := DecodeTimerCheckpoint(b)
	if err != nil || got != c {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	old, err := DecodeTimerCheckpoint(b[:32])
	if err != nil || old != (TimerCheckpoint{1, -2, 3, 4, 0, 0, 0}) {
		t.Fatalf("32-byte form: %+v, %v", old, err)
	}
	for _, n := range []int{0, 8, 33, 57} {
		if _, err := DecodeTimerCheckpoint(make([]byte, n)); err == nil {
			t.Errorf("%d bytes accepted", n)
		}
	}
}
