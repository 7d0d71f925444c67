package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStatsAgainstRocketd sends 3 messages and consumes them with a group,
// then checks `cluster list --runtime` (PUT_TODAY, GET_TODAY, TPS columns)
// and `stats` (the topic's puts and the group's gets from
// VIEW_BROKER_STATS_DATA, once the broker's 10 s sampling saw them).
func TestStatsAgainstRocketd(t *testing.T) {
	ns := startRocketd(t)
	const topic, group = "StatsTopic", "stats_group"
	mustRun(t, "-n", ns, "topic", "create", "-t", topic, "-r", "1", "-w", "1")
	waitFor(t, 10*time.Second, "topic route of "+topic, func() (bool, string) {
		out, err := rocketctl(t, "-n", ns, "topic", "route", "-t", topic)
		return err == nil, out
	})
	mustRun(t, "-n", ns, "send", "-t", topic, "-b", "s", "--count", "3")
	// The sends are acknowledged before the consume queue is dispatched: a
	// consume right after may find fewer; it commits what it got.
	total := 0
	waitFor(t, 10*time.Second, "3 messages consumed", func() (bool, string) {
		out := mustRun(t, "-n", ns, "--json", "consume", "-t", topic, "-g", group, "-c", strconv.Itoa(3-total))
		total += len(parseJSONLines[consumed](t, out))
		return total == 3, out
	})

	type row struct {
		Runtime map[string]string `json:"runtime"`
		Error   string            `json:"runtimeError"`
	}
	rows := parseJSONLines[[]row](t, mustRun(t, "-n", ns, "--json", "cluster", "list", "--runtime"))[0]
	if len(rows) != 1 || rows[0].Error != "" || rows[0].Runtime["msgPutTotalTodayNow"] != "3" || rows[0].Runtime["msgGetTotalTodayNow"] != "3" {
		t.Fatalf("cluster list --runtime: %+v", rows)
	}
	text := mustRun(t, "-n", ns, "cluster", "list", "--runtime")
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "IN_TPS") || !strings.Contains(lines[0], "OUT_TPS") {
		t.Fatalf("cluster list --runtime:\n%s", text)
	}
	head, vals := strings.Fields(lines[0]), strings.Fields(lines[1])
	col := map[string]string{}
	for i, h := range head {
		if i < len(vals) {
			col[h] = vals[i]
		}
	}
	if col["PUT_TODAY"] != "3" || col["GET_TODAY"] != "3" || col["VERSION"] != "V4_9_8" {
		t.Fatalf("cluster list --runtime columns %v:\n%s", col, text)
	}

	waitFor(t, 20*time.Second, "the minute statistics of "+topic, func() (bool, string) {
		out := mustRun(t, "-n", ns, "--json", "stats", "-t", topic)
		got := parseJSONLines[[]statsRow](t, out)[0]
		var put, get bool
		for _, r := range got {
			put = put || r.Kind == "put" && r.Group == "" && r.Minute.Sum == 3 && r.Minute.Tps > 0
			get = get || r.Kind == "get" && r.Group == group && r.Minute.Sum == 3
		}
		return put && get, out
	})
	text = mustRun(t, "-n", ns, "stats", "-t", topic)
	if !strings.Contains(text, "TPS_1M") || !strings.Contains(text, group) {
		t.Fatalf("stats:\n%s", text)
	}
	// A topic nobody sent to has no rows, and --json prints [].
	mustRun(t, "-n", ns, "topic", "create", "-t", "Quiet", "-r", "1", "-w", "1")
	if out := strings.TrimSpace(mustRun(t, "-n", ns, "--json", "stats", "-t", "Quiet")); out != "[]" {
		t.Fatalf("stats of a quiet topic: %s", out)
	}
}
