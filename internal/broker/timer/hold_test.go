package timer

import (
	"strconv"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
)

func TestHold(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	nowMs := now.UnixMilli()
	year := 365 * 24 * time.Hour
	on := Policy{Enabled: true, MaxDelay: year}
	for _, tc := range []struct {
		name    string
		props   map[string]string
		policy  Policy
		want    HoldStatus
		wantOut int64
	}{
		{"no timer", map[string]string{"a": "b"}, on, NotTimer, 0},
		{"deliver ms", map[string]string{message.PropertyTimerDeliverMS: strconv.FormatInt(nowMs+3000, 10)}, on, Held, nowMs + 3000},
		{"delay sec", map[string]string{message.PropertyTimerDelaySec: "5"}, on, Held, nowMs + 5000},
		{"delay ms", map[string]string{message.PropertyTimerDelayMS: "1500"}, on, Held, nowMs + 1500},
		{"a year", map[string]string{message.PropertyTimerDelaySec: strconv.Itoa(int(year / time.Second))}, on, Held, nowMs + year.Milliseconds()},
		{"beyond max", map[string]string{message.PropertyTimerDelaySec: strconv.Itoa(int(year/time.Second) + 1)}, on, Illegal, 0},
		{"garbage", map[string]string{message.PropertyTimerDeliverMS: "soon"}, on, Illegal, 0},
		{"negative delay", map[string]string{message.PropertyTimerDelayMS: "-5"}, on, Illegal, 0},
		{"past", map[string]string{message.PropertyTimerDeliverMS: strconv.FormatInt(nowMs-1, 10)}, on, NotTimer, 0},
		{"disabled", map[string]string{message.PropertyTimerDelaySec: "5"}, Policy{MaxDelay: year}, Disabled, 0},
		{"delay level wins", map[string]string{message.PropertyTimerDelaySec: "5", message.PropertyDelayTimeLevel: "2"}, on, NotTimer, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := message.Record{Topic: "T", QueueID: 3, Properties: message.EncodeProperties(tc.props)}
			if may := MayHold(rec.Properties); may != (tc.name != "no timer") {
				t.Fatalf("MayHold = %v", may)
			}
			got := Hold(&rec, now, tc.policy)
			if got != tc.want {
				t.Fatalf("Hold = %v, want %v", got, tc.want)
			}
			if got != Held {
				if rec.Topic != "T" || rec.QueueID != 3 {
					t.Fatalf("record moved: %s/%d", rec.Topic, rec.QueueID)
				}
				if tc.name == "delay level wins" {
					if _, ok := message.Property(rec.Properties, message.PropertyTimerDelaySec); ok {
						t.Fatal("timer property kept beside DELAY")
					}
				}
				return
			}
			out, _ := message.Property(rec.Properties, message.PropertyTimerOutMS)
			rt, _ := message.Property(rec.Properties, message.PropertyRealTopic)
			rq, _ := message.Property(rec.Properties, message.PropertyRealQueueID)
			if rec.Topic != Topic || rec.QueueID != 0 || out != strconv.FormatInt(tc.wantOut, 10) || rt != "T" || rq != "3" {
				t.Fatalf("held as %s/%d out=%s real=%s/%s", rec.Topic, rec.QueueID, out, rt, rq)
			}
		})
	}
}

// BenchmarkHoldPlain is the send path's timer check of a message without
// timer properties (UNIQ_KEY, WAIT, TAGS, KEYS, as a producer sends):
// Hold alone, and MayHold first as processor.holdTimer does.
func BenchmarkHoldPlain(b *testing.B) {
	props := message.EncodeProperties(map[string]string{
		message.PropertyUniqClientMessageIDKeyIdx: "7F00000100002A9F0000000000000001",
		message.PropertyWaitStoreMsgOK:            "true", "TAGS": "a", "KEYS": "order-1",
	})
	p := Policy{Enabled: true, MaxDelay: time.Hour}
	b.Run("hold", func(b *testing.B) {
		rec := message.Record{Topic: "T", Properties: props}
		for b.Loop() {
			if Hold(&rec, time.Now(), p) != NotTimer {
				b.Fatal("held")
			}
		}
	})
	b.Run("mayhold", func(b *testing.B) {
		rec := message.Record{Topic: "T", Properties: props}
		for b.Loop() {
			if MayHold(rec.Properties) && Hold(&rec, time.Now(), p) != NotTimer {
				b.Fatal("held")
			}
		}
	})
}

func TestHoldStatusString(t *testing.T) {
	if Illegal.String() != "WHEEL_TIMER_MSG_ILLEGAL" || HoldStatus(42).String() != "HoldStatus(42)" {
		t.Fatal(Illegal.String(), HoldStatus(42).String())
	}
}
