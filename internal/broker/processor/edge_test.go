package processor_test

import (
	"testing"

	"github.com/rocketd/rocketd/internal/protocol"
)

// TestPullOddNumbers: zero or negative counts and offsets are answered
// with a status and offsets, never a crash or a hang.
func TestPullOddNumbers(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 1)
	e.send(sendHeader("T", 0, ""), "x")
	e.waitMaxOffset("T", 0, 1)
	for _, c := range []struct {
		max    int32
		offset int64
	}{{0, 0}, {-5, 0}, {32, -1}, {1 << 30, 0}, {32, 1 << 62}} {
		h := pullHeader("g", "T", 0, c.offset, "*")
		h.MaxMsgNums = c.max
		r := e.call(protocol.PullMessage, protocol.Ext(h), nil)
		ph := pullHeaderOf(t, r)
		t.Logf("max %d offset %d: %d %s next %d", c.max, c.offset, r.Code, r.Remark, ph.NextBeginOffset)
		if ph.NextBeginOffset < 0 || ph.NextBeginOffset > 1 {
			t.Fatalf("max %d offset %d: nextBeginOffset %d", c.max, c.offset, ph.NextBeginOffset)
		}
	}
}
