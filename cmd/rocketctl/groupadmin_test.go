package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestGroupResetDeleteAndTopicDelete runs group reset, group delete and
// topic delete against a real NameServer and broker.
func TestGroupResetDeleteAndTopicDelete(t *testing.T) {
	ns := startRocketd(t)
	const topic, group = "ResetTopic", "reset_group"
	mustRun(t, "-n", ns, "topic", "create", "-t", topic, "-r", "2", "-w", "2")
	waitFor(t, 10*time.Second, "the topic route", func() (bool, string) {
		out, err := rocketctl(t, "-n", ns, "topic", "route", "-t", topic)
		return err == nil, out
	})
	mustRun(t, "-n", ns, "send", "-t", topic, "-b", "m", "--count", "4")
	// Sends are dispatched to the queues asynchronously.
	waitFor(t, 10*time.Second, "4 messages in the queues", func() (bool, string) {
		out, err := rocketctl(t, "-n", ns, "--json", "topic", "status", "-t", topic)
		var qs []queueStatus
		if err != nil || json.Unmarshal([]byte(out), &qs) != nil {
			return false, out
		}
		var n int64
		for _, q := range qs {
			n += q.MaxOffset
		}
		return n == 4, out
	})
	// Consuming creates the group (a reset needs it to exist, code 26).
	mustRun(t, "-n", ns, "consume", "-t", topic, "-g", group, "-c", "4")

	// To the ends: the new offsets are the queues' max offsets (4 in all).
	out := mustRun(t, "-n", ns, "--json", "group", "reset", "-g", group, "-t", topic, "--timestamp", "-1")
	var res struct {
		Offsets []resetRow `json:"offsets"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var total int64
	for _, r := range res.Offsets {
		total += r.Offset
	}
	if len(res.Offsets) != 2 || total != 4 {
		t.Fatalf("reset to the ends: %s", out)
	}
	// Back to a time before any message: every queue at 0.
	out = mustRun(t, "-n", ns, "group", "reset", "-g", group, "-t", topic, "--time", "2000-01-01")
	if !strings.Contains(out, "BROKER") || strings.Count(out, "  0\n") != 2 {
		t.Fatalf("reset to 2000-01-01:\n%s", out)
	}
	out = mustRun(t, "-n", ns, "group", "progress", "-g", group, "-t", topic)
	if !strings.Contains(out, "total lag: 4") {
		t.Fatalf("progress after the reset:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"group", "reset", "-g", group, "-t", topic}, "give --time or --timestamp"},
		{[]string{"group", "reset", "-g", group, "-t", topic, "--time", "yesterday"}, `--time "yesterday"`},
		{[]string{"group", "reset", "-g", group, "-t", topic, "--timestamp", "-5"}, "--timestamp -5"},
		{[]string{"group", "reset", "-g", group, "-t", topic, "--time", "now", "--timestamp", "1"}, "give --time or --timestamp"},
		{[]string{"group", "reset", "-g", group, "-t", "NoSuchTopic", "--time", "now"}, "route of NoSuchTopic"},
		{[]string{"group", "reset", "-g", "no_such_group", "-t", topic, "--time", "now"}, "response code 26: Group no_such_group does not exist"},
		{[]string{"group", "delete", "-g", group}, "give -c cluster or -b broker"},
		{[]string{"topic", "delete", "-t", topic, "-c", "NoSuchCluster"}, `cluster "NoSuchCluster" is not known`},
	} {
		out, err := rocketctl(t, append([]string{"-n", ns}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v (want %q)\n%s", c.args, err, c.want, out)
		}
	}

	out = mustRun(t, "-n", ns, "group", "delete", "-g", group, "-c", "DefaultCluster", "--remove-offset")
	if !strings.Contains(out, "deleted group "+group+" from 127.0.0.1:") || !strings.Contains(out, "deleted topic %DLQ%"+group) {
		t.Fatalf("group delete:\n%s", out)
	}
	if out, err := rocketctl(t, "-n", ns, "group", "progress", "-g", group); err == nil {
		t.Fatalf("offsets still there after group delete --remove-offset:\n%s", out)
	}

	out = mustRun(t, "-n", ns, "topic", "delete", "-t", topic)
	if out != "deleted topic "+topic+" from cluster DefaultCluster\n" {
		t.Fatalf("topic delete: %q", out)
	}
	if out, err := rocketctl(t, "-n", ns, "topic", "route", "-t", topic); err == nil {
		t.Fatalf("route still there after topic delete:\n%s", out)
	}
	if out := mustRun(t, "-n", ns, "topic", "list"); strings.Contains(out, topic) {
		t.Fatalf("topic still listed:\n%s", out)
	}
}
