package main

import (
	"strings"
	"testing"
	"time"
)

// TestMessageQuery: messages sent with keys are found by a KEYS entry and
// by message id through QUERY_MESSAGE; an absent key is an error.
func TestMessageQuery(t *testing.T) {
	ns := startRocketd(t)
	mustRun(t, "-n", ns, "topic", "create", "-t", "QueryTopic", "-r", "2", "-w", "2")
	waitFor(t, 10*time.Second, "the topic route", func() (bool, string) {
		out, err := rocketctl(t, "-n", ns, "topic", "route", "-t", "QueryTopic")
		return err == nil, out
	})
	mustRun(t, "-n", ns, "send", "-t", "QueryTopic", "-b", "other", "--keys", "order-1", "--count", "1")
	sent := parseJSONLines[sendResult](t, mustRun(t, "-n", ns, "--json", "send", "-t", "QueryTopic", "-b", "wanted",
		"--keys", "order-2 shared", "--count", "2"))
	if len(sent) != 2 {
		t.Fatalf("sent %+v", sent)
	}
	var got []consumed
	waitFor(t, 10*time.Second, "the index", func() (bool, string) {
		out, err := rocketctl(t, "-n", ns, "--json", "message", "query", "-t", "QueryTopic", "-k", "order-2")
		if err != nil {
			return false, err.Error()
		}
		got = parseJSONLines[consumed](t, out)
		return len(got) == 2, out
	})
	for _, m := range got {
		if m.Body != "wanted" || m.Keys != "order-2 shared" || m.Topic != "QueryTopic" {
			t.Errorf("by key: %+v", m)
		}
	}
	out := mustRun(t, "-n", ns, "--json", "message", "query", "-t", "QueryTopic", "-k", sent[1].MsgID, "--unique")
	if byID := parseJSONLines[consumed](t, out); len(byID) != 1 || byID[0].MsgID != sent[1].MsgID || byID[0].Body != "wanted" {
		t.Errorf("by message id %s: %s", sent[1].MsgID, out)
	}
	if out := mustRun(t, "-n", ns, "message", "query", "-t", "QueryTopic", "-k", "order-1"); !strings.Contains(out, "body: other") {
		t.Errorf("text output:\n%s", out)
	}
	if _, err := rocketctl(t, "-n", ns, "message", "query", "-t", "QueryTopic", "-k", "absent"); err == nil ||
		!strings.Contains(err.Error(), "no message found") {
		t.Errorf("absent key: %v", err)
	}
}
