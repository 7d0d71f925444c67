package config

import (
	"strings"
	"testing"
)

// TestTimerKeys: the timer settings of issue 5 (defaults as RocketMQ 5,
// a year accepted, nonsense refused with the key named).
func TestTimerKeys(t *testing.T) {
	c, unknown, err := BrokerConfigFromProperties(Properties{})
	if err != nil || len(unknown) != 0 {
		t.Fatal(err, unknown)
	}
	if !c.TimerWheelEnable || c.TimerMaxDelaySec != 259200 || c.TimerPrecisionMs != 1000 {
		t.Fatalf("defaults: enable %v max %d precision %d", c.TimerWheelEnable, c.TimerMaxDelaySec, c.TimerPrecisionMs)
	}
	c, unknown, err = BrokerConfigFromProperties(Properties{
		"timerWheelEnable": "false", "timerMaxDelaySec": "31536000", "timerPrecisionMs": "500",
	})
	if err != nil || len(unknown) != 0 {
		t.Fatal(err, unknown)
	}
	if c.TimerWheelEnable || c.TimerMaxDelaySec != 31536000 || c.TimerPrecisionMs != 500 {
		t.Fatalf("bound: %+v", c)
	}
	for _, bad := range []Properties{{"timerMaxDelaySec": "-1"}, {"timerPrecisionMs": "-5"}, {"timerMaxDelaySec": "soon"}} {
		_, _, err := BrokerConfigFromProperties(bad)
		var key string
		for k := range bad {
			key = k
		}
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%v: %v", bad, err)
		}
	}
}
