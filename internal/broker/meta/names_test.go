package meta

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateTopic(t *testing.T) {
	ok := []string{"TopicTest", "a", "%RETRY%group_1", "%DLQ%g", "a|b", "A-b_9", strings.Repeat("x", 127)}
	for _, name := range ok {
		if err := ValidateTopic(name); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
	bad := map[string]string{
		"":                       "The specified topic is blank.",
		"   ":                    "The specified topic is blank.",
		"a.b":                    "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$",
		"a b":                    "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$",
		"é":                      "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$",
		"a@b":                    "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$",
		strings.Repeat("x", 128): "The specified topic is longer than topic max length.",
	}
	for name, remark := range bad {
		err := ValidateTopic(name)
		if !errors.Is(err, ErrInvalidName) || err.Error() != remark {
			t.Errorf("%q: got %v, want %q", name, err, remark)
		}
	}
}

func TestSendForbidden(t *testing.T) {
	for _, topic := range []string{ScheduleTopic, TransHalfTopic, TransOpHalfTopic, TransCheckMaxTopic, SelfTestTopic, OffsetMovedTopic} {
		if !SendForbidden(topic) {
			t.Errorf("%s should be forbidden", topic)
		}
	}
	for _, topic := range []string{AutoCreateTopic, "TopicTest", "%RETRY%g", "%DLQ%g", TraceTopic, BenchmarkTopic} {
		if SendForbidden(topic) {
			t.Errorf("%s should be allowed", topic)
		}
	}
	if got := SendForbiddenRemark(ScheduleTopic); got != "Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden." {
		t.Errorf("remark %q", got)
	}
}

func TestPermName(t *testing.T) {
	cases := []struct {
		perm          int32
		r, w, inherit bool
		str           string
	}{
		{0, false, false, false, "---"},
		{1, false, false, true, "--X"},
		{2, false, true, false, "-W-"},
		{4, true, false, false, "R--"},
		{6, true, true, false, "RW-"},
		{7, true, true, true, "RWX"},
		{14, true, true, false, "RW-"},
	}
	for _, c := range cases {
		if IsReadable(c.perm) != c.r || IsWriteable(c.perm) != c.w || IsInherited(c.perm) != c.inherit || PermString(c.perm) != c.str {
			t.Errorf("perm %d: r=%v w=%v x=%v %q", c.perm, IsReadable(c.perm), IsWriteable(c.perm), IsInherited(c.perm), PermString(c.perm))
		}
	}
}

func TestRetryAndDLQNames(t *testing.T) {
	if RetryTopic("g") != "%RETRY%g" || DLQTopic("g") != "%DLQ%g" {
		t.Fatal(RetryTopic("g"), DLQTopic("g"))
	}
	if !IsRetryTopic("%RETRY%g") || IsRetryTopic("%DLQ%g") || !IsDLQTopic("%DLQ%g") || IsDLQTopic("g") {
		t.Fatal("prefix predicates")
	}
	if !IsSysConsumerGroup("CID_RMQ_SYS_TRANS") || IsSysConsumerGroup("CID_X") {
		t.Fatal("sys group predicate")
	}
}
