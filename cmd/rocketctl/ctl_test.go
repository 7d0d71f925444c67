package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// parseJSONLines decodes output printed as one JSON value per line.
func parseJSONLines[T any](t *testing.T, out string) []T {
	t.Helper()
	var rows []T
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("not a JSON line: %q: %v", line, err)
		}
		rows = append(rows, v)
	}
	return rows
}

// exerciseCLI is the operator's round trip against whatever broker ns leads
// to (the fake one or rocketd): create a topic, send, consume back, follow a
// group's progress.
func exerciseCLI(t *testing.T, ns string) {
	const topic = "CtlTopic"
	out := mustRun(t, "-n", ns, "topic", "create", "-t", topic, "-r", "2", "-w", "2")
	if !strings.Contains(out, "created CtlTopic on ") {
		t.Fatalf("topic create: %q", out)
	}
	// The broker registers the topic with the NameServer (a real broker
	// does it in the background right after the change).
	waitFor(t, 10*time.Second, "topic list to show "+topic, func() (bool, string) {
		out := mustRun(t, "-n", ns, "topic", "list")
		return strings.Contains(out, topic+"\n"), out
	})
	if out := mustRun(t, "-n", ns, "topic", "route", "-t", topic); !strings.Contains(out, "2     2      RW-") {
		t.Errorf("topic route:\n%s", out)
	}

	out = mustRun(t, "-n", ns, "--json", "send", "-t", topic, "-b", "hello rocketd", "--tags", "TagA",
		"--keys", "k1 k2", "-p", "color=blue", "-p", "size=L", "--count", "3")
	sent := parseJSONLines[sendResult](t, out)
	if len(sent) != 3 {
		t.Fatalf("send --count 3 printed %d results:\n%s", len(sent), out)
	}
	queues := map[int32]int{}
	for _, s := range sent {
		if s.Status != "SEND_OK" || s.MsgID == "" || s.OffsetMsgID == "" || s.RTTMillis <= 0 {
			t.Errorf("send result %+v", s)
		}
		queues[s.QueueID]++
	}
	if len(queues) != 2 || queues[0]+queues[1] != 3 {
		t.Errorf("round-robin over 2 queues put %v", queues)
	}
	if out := mustRun(t, "-n", ns, "send", "-t", topic, "-b", "other tag", "--tags", "TagB", "-q", "1"); !strings.Contains(out, "SEND_OK msgId=") ||
		!strings.Contains(out, "queue=") || !strings.Contains(out, "rtt=") {
		t.Errorf("send (text): %q", out)
	}

	// The broker answers a send once the CommitLog has the message; the
	// consume queues are filled just after (as in Java): wait for them.
	waitFor(t, 10*time.Second, "4 messages in the consume queues", func() (bool, string) {
		out := mustRun(t, "-n", ns, "topic", "status", "-t", topic)
		return strings.Contains(out, "messages held: 4"), out
	})
	// Everything, in queue order.
	got := parseJSONLines[consumed](t, mustRun(t, "-n", ns, "--json", "consume", "-t", topic))
	if len(got) != 4 {
		t.Fatalf("consume printed %d messages, want 4: %+v", len(got), got)
	}
	byID := map[string]consumed{}
	for _, m := range got {
		byID[m.MsgID] = m
	}
	for _, s := range sent {
		m, ok := byID[s.MsgID]
		if !ok {
			t.Errorf("message %s not consumed", s.MsgID)
			continue
		}
		if m.Body != "hello rocketd" || m.Tags != "TagA" || m.Keys != "k1 k2" || m.Properties["color"] != "blue" ||
			m.Properties["size"] != "L" || m.QueueID != s.QueueID || m.QueueOffset != s.QueueOffset || m.OffsetMsgID != s.OffsetMsgID {
			t.Errorf("consumed %+v for sent %+v", m, s)
		}
	}
	// Human output shows the parts an operator looks for.
	text := mustRun(t, "-n", ns, "consume", "-t", topic, "-q", "1")
	for _, want := range []string{"queue=", "offset=0", "tags=TagA", `keys="k1 k2"`, "color=blue", "body: hello rocketd", "body: other tag"} {
		if !strings.Contains(text, want) {
			t.Errorf("consume -q 1 lacks %q:\n%s", want, text)
		}
	}
	// Tag expression and count limit.
	if got := parseJSONLines[consumed](t, mustRun(t, "-n", ns, "--json", "consume", "-t", topic, "-s", "TagB")); len(got) != 1 || got[0].Body != "other tag" {
		t.Errorf("consume -s TagB: %+v", got)
	}
	if got := parseJSONLines[consumed](t, mustRun(t, "-n", ns, "--json", "consume", "-t", topic, "-c", "2")); len(got) != 2 {
		t.Errorf("consume -c 2 printed %d", len(got))
	}
	// The queue that got two of the three round-robin sends.
	twice := "0"
	if queues[1] == 2 {
		twice = "1"
	}
	if got := parseJSONLines[consumed](t, mustRun(t, "-n", ns, "--json", "consume", "-t", topic, "-q", twice, "--offset", "1", "-c", "1")); len(got) != 1 || got[0].QueueOffset != 1 {
		t.Errorf("consume -q %s --offset 1: %+v", twice, got)
	}

	// A group: lag before, consume, lag 0, nothing left for the group.
	lag := func() int64 {
		var total int64
		for _, r := range parseJSONLines[[]queueProgress](t, mustRun(t, "-n", ns, "--json", "group", "progress", "-g", "ctl_group", "-t", topic))[0] {
			total += r.Lag
		}
		return total
	}
	if l := lag(); l != 4 {
		t.Errorf("lag before consuming: %d, want 4", l)
	}
	if got := parseJSONLines[consumed](t, mustRun(t, "-n", ns, "--json", "consume", "-t", topic, "-g", "ctl_group", "-c", "3")); len(got) != 3 {
		t.Errorf("group consume -c 3 printed %d", len(got))
	}
	if l := lag(); l != 1 {
		t.Errorf("lag after 3 of 4: %d, want 1", l)
	}
	if got := parseJSONLines[consumed](t, mustRun(t, "-n", ns, "--json", "consume", "-t", topic, "-g", "ctl_group")); len(got) != 1 {
		t.Errorf("group consume continues with the 1 left, printed %d", len(got))
	}
	if l := lag(); l != 0 {
		t.Errorf("lag after consuming all: %d, want 0", l)
	}
	progressText := mustRun(t, "-n", ns, "group", "progress", "-g", "ctl_group", "-t", topic)
	if !strings.Contains(progressText, "total lag: 0") || !strings.Contains(progressText, "CONSUMER_OFFSET") {
		t.Errorf("group progress:\n%s", progressText)
	}
	if out := mustRun(t, "-n", ns, "consume", "-t", topic, "-g", "ctl_group"); out != "" {
		t.Errorf("a drained group printed:\n%s", out)
	}

	status := mustRun(t, "-n", ns, "topic", "status", "-t", topic)
	if !strings.Contains(status, "messages held: 4") {
		t.Errorf("topic status:\n%s", status)
	}
	if out := mustRun(t, "-n", ns, "cluster", "list"); !strings.Contains(out, "CLUSTER") {
		t.Errorf("cluster list:\n%s", out)
	}
}

func TestCLIAgainstFakeBroker(t *testing.T) {
	ns := startEmptyNamesrv(t)
	startFakeBroker(t, ns)
	exerciseCLI(t, ns)
}

func TestSendErrors(t *testing.T) {
	ns := startEmptyNamesrv(t)
	b := startFakeBroker(t, ns)
	// No TBW102 route: the error says how to create the topic.
	_, err := rocketctl(t, "-n", ns, "send", "-t", "Nope", "-b", "x")
	if err == nil || !strings.Contains(err.Error(), "rocketctl topic create -t Nope") {
		t.Errorf("send to unknown topic: %v", err)
	}
	mustRun(t, "-n", ns, "topic", "create", "-t", "T1", "-b", b.addr(), "-w", "1", "-r", "1")
	for _, bad := range [][]string{
		{"send", "-t", "T1", "-b", "x", "-p", "novalue"},
		{"send", "-t", "T1", "-b", "x", "-p", "TAGS=a"},
		{"send", "-t", "T1", "-b", "x", "--count", "0"},
		{"send", "-t", "T1", "-b", "x", "-q", "7"},
		{"consume", "-t", "T1", "--offset", "1", "--from-beginning"},
		{"topic", "create", "-t", "T2", "-b", b.addr(), "-c", "FakeCluster"},
		{"topic", "create", "-t", "T2", "-c", "NoSuchCluster"},
	} {
		if _, err := rocketctl(t, append([]string{"-n", ns}, bad...)...); err == nil {
			t.Errorf("rocketctl %v accepted", bad)
		}
	}
}

// TestConsumeBadBroker: a pull answer that is not records, or FOUND without
// progress, is an error naming the queue, never a panic or an endless loop.
func TestConsumeBadBroker(t *testing.T) {
	ns := startEmptyNamesrv(t)
	b := startFakeBroker(t, ns)
	mustRun(t, "-n", ns, "topic", "create", "-t", "Bad", "-b", b.addr(), "-w", "1", "-r", "1")
	waitFor(t, 5*time.Second, "the route", func() (bool, string) {
		out, err := rocketctl(t, "-n", ns, "topic", "route", "-t", "Bad")
		return err == nil, out
	})
	for name, body := range map[string][]byte{
		"garbage":   []byte("not a record at all, just text"),
		"truncated": {0, 0, 0, 200, 0xda, 0xa3, 0x20, 0xa7, 1, 2},
		"empty":     {},
	} {
		b.mu.Lock()
		b.badPull = body
		b.mu.Unlock()
		_, err := rocketctl(t, "-n", ns, "consume", "-t", "Bad")
		if err == nil || !strings.Contains(err.Error(), "pull fake-a:0 at 0") {
			t.Errorf("%s pull body: %v", name, err)
		}
	}
}

func TestHelpForEveryCommand(t *testing.T) {
	root, closeClient := newRootCommand()
	defer closeClient()
	var paths [][]string
	var walk func(path []string, c *cobra.Command)
	walk = func(path []string, c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			p := append(slices.Clone(path), sub.Name())
			if sub.Short == "" {
				t.Errorf("%v has no help text", p)
			}
			paths = append(paths, p)
			walk(p, sub)
		}
	}
	walk(nil, root)
	if len(paths) < 16 {
		t.Fatalf("only %d commands found: %v", len(paths), paths)
	}
	for _, p := range paths {
		out := mustRun(t, append(p, "--help")...)
		if !strings.Contains(out, "Usage:") || !strings.Contains(out, "--namesrv") {
			t.Errorf("%v --help:\n%s", p, out)
		}
	}
}
