package namesrv

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/testutil/script"
)

// TestRouteTableScripts runs the scenario files under testdata/routetable.
// Each file is a sequence of blocks (the format of testutil/script):
//
//	<command> [key=value ...]
//	----
//	<expected output>
//	<blank line>
//
// Commands (times are seconds since an arbitrary epoch, set by "at"):
//
//	at t=<sec>
//	register cluster= name= addr= id= [ha=] [dv=<counter>] [conn=] [topics=T:r/w/perm,...]
//	unregister cluster= name= addr= id=
//	close-conn conn=
//	expire ttl=<sec>
//	dv addr= dv=<counter>
//	route topic=
//	cluster
//	topics [cluster=]
//	delete-topic topic= [cluster=]
//	wipe name= | add-perm name=
//	dump
//
// Run with -rewrite to regenerate the expected outputs, then review the diff.
func TestRouteTableScripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "routetable", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenario files")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) { runRouteScript(t, path) })
	}
}

func runRouteScript(t *testing.T, path string) {
	tbl := NewTable()
	epoch := time.Unix(1_700_000_000, 0)
	now := epoch
	script.Run(t, path, func(t *testing.T, c script.Case) string {
		if c.Input != "" {
			t.Fatalf("%s:%d: %q takes no input lines", path, c.Line, c.Directive)
		}
		got := execRouteCmd(t, tbl, &now, epoch, c.Directive)
		if err := tbl.checkInvariants(); err != nil {
			t.Fatalf("%s:%d: after %q: %v", path, c.Line, c.Directive, err)
		}
		return got
	})
}

func scriptArgs(t *testing.T, fields []string) map[string]string {
	t.Helper()
	args := map[string]string{}
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("argument %q is not key=value", f)
		}
		args[k] = v
	}
	return args
}

func argInt(t *testing.T, args map[string]string, key string) int64 {
	t.Helper()
	s, ok := args[key]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", key, s, err)
	}
	return n
}

// parseTopics reads "T1:8/6/6,T2:4/4/7" (name:read/write/perm).
func parseTopics(t *testing.T, s string) []TopicConfig {
	t.Helper()
	if s == "" {
		return nil
	}
	var out []TopicConfig
	for _, item := range strings.Split(s, ",") {
		name, nums, ok := strings.Cut(item, ":")
		parts := strings.Split(nums, "/")
		if !ok || len(parts) != 3 {
			t.Fatalf("topic %q: want name:read/write/perm", item)
		}
		var v [3]int32
		for i, p := range parts {
			n, err := strconv.ParseInt(p, 10, 32)
			if err != nil {
				t.Fatalf("topic %q: %v", item, err)
			}
			v[i] = int32(n)
		}
		out = append(out, TopicConfig{TopicName: name, ReadQueueNums: v[0], WriteQueueNums: v[1], Perm: v[2]})
	}
	return out
}

func execRouteCmd(t *testing.T, tbl *Table, now *time.Time, epoch time.Time, line string) string {
	t.Helper()
	fields := strings.Fields(line)
	args := scriptArgs(t, fields[1:])
	connOf := func() any {
		if c, ok := args["conn"]; ok {
			return c
		}
		return nil
	}
	switch fields[0] {
	case "at":
		*now = epoch.Add(time.Duration(argInt(t, args, "t")) * time.Second)
		return "ok\n"
	case "register":
		res := tbl.Register(Registration{
			ClusterName:  args["cluster"],
			BrokerName:   args["name"],
			BrokerAddr:   args["addr"],
			BrokerID:     argInt(t, args, "id"),
			HAServerAddr: args["ha"],
			DataVersion:  DataVersion{Timestamp: 1, Counter: argInt(t, args, "dv")},
			Topics:       parseTopics(t, args["topics"]),
			Conn:         connOf(),
		}, *now)
		return fmt.Sprintf("masterAddr=%q haServerAddr=%q\n", res.MasterAddr, res.HAServerAddr)
	case "unregister":
		tbl.Unregister(Unregistration{
			ClusterName: args["cluster"], BrokerName: args["name"],
			BrokerAddr: args["addr"], BrokerID: argInt(t, args, "id"),
		})
		return dumpTable(tbl)
	case "close-conn":
		return fmt.Sprintf("removed %v\n", tbl.RemoveConn(args["conn"]))
	case "expire":
		var addrs []string
		for _, e := range tbl.Expire(*now, time.Duration(argInt(t, args, "ttl"))*time.Second) {
			addrs = append(addrs, fmt.Sprintf("%s(conn=%v)", e.Addr, e.Conn))
		}
		return fmt.Sprintf("expired %v\n", addrs)
	case "dv":
		changed, cur, known := tbl.DataVersionChanged(args["addr"], DataVersion{Timestamp: 1, Counter: argInt(t, args, "dv")}, *now)
		return fmt.Sprintf("changed=%v current=%d known=%v\n", changed, cur.Counter, known)
	case "route":
		r, ok := tbl.Route(args["topic"])
		if !ok {
			return "TOPIC_NOT_EXIST\n"
		}
		return formatRoute(r)
	case "cluster":
		return formatCluster(tbl.ClusterInfo())
	case "topics":
		if c, ok := args["cluster"]; ok {
			return fmt.Sprintf("%v\n", tbl.TopicsByCluster(c))
		}
		return fmt.Sprintf("%v\n", tbl.Topics())
	case "delete-topic":
		return fmt.Sprintf("removed=%v\n", tbl.DeleteTopic(args["topic"], args["cluster"]))
	case "wipe":
		return fmt.Sprintf("wipeTopicCount=%d\n", tbl.WipeWritePerm(args["name"]))
	case "add-perm":
		return fmt.Sprintf("addTopicCount=%d\n", tbl.AddWritePerm(args["name"]))
	case "dump":
		return dumpTable(tbl)
	}
	t.Fatalf("unknown command %q", line)
	return ""
}

func formatAddrs(m map[int64]string) string {
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d:%s", id, m[id]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func formatRoute(r Route) string {
	var b strings.Builder
	for _, q := range r.QueueDatas {
		fmt.Fprintf(&b, "queue %s r=%d w=%d perm=%d sysflag=%d\n", q.BrokerName, q.ReadQueueNums, q.WriteQueueNums, q.Perm, q.TopicSysFlag)
	}
	for _, bd := range r.BrokerDatas {
		fmt.Fprintf(&b, "broker %s cluster=%s addrs=%s\n", bd.BrokerName, bd.Cluster, formatAddrs(bd.BrokerAddrs))
	}
	return b.String()
}

func formatCluster(ci ClusterInfo) string {
	var b strings.Builder
	for _, c := range slices.Sorted(maps.Keys(ci.ClusterAddrTable)) {
		fmt.Fprintf(&b, "cluster %s: %v\n", c, ci.ClusterAddrTable[c])
	}
	for _, name := range slices.Sorted(maps.Keys(ci.BrokerAddrTable)) {
		bd := ci.BrokerAddrTable[name]
		fmt.Fprintf(&b, "broker %s cluster=%s addrs=%s\n", name, bd.Cluster, formatAddrs(bd.BrokerAddrs))
	}
	if b.Len() == 0 {
		return "(empty)\n"
	}
	return b.String()
}

// dumpTable prints the whole table: membership, routes of every topic and
// live brokers.
func dumpTable(tbl *Table) string {
	var b strings.Builder
	b.WriteString(formatCluster(tbl.ClusterInfo()))
	for _, topic := range tbl.Topics() {
		r, ok := tbl.Route(topic)
		if !ok {
			fmt.Fprintf(&b, "topic %s: TOPIC_NOT_EXIST\n", topic)
			continue
		}
		for _, q := range r.QueueDatas {
			fmt.Fprintf(&b, "topic %s on %s r=%d w=%d perm=%d\n", topic, q.BrokerName, q.ReadQueueNums, q.WriteQueueNums, q.Perm)
		}
	}
	fmt.Fprintf(&b, "live %v\n", tbl.LiveBrokers())
	return b.String()
}

// TestRouteIsACopy checks that a route handed out cannot alter the table.
func TestRouteIsACopy(t *testing.T) {
	tbl := NewTable()
	tbl.Register(Registration{ClusterName: "c", BrokerName: "a", BrokerAddr: "1.1.1.1:10911",
		Topics: []TopicConfig{{TopicName: "T", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}}}, time.Now())
	r, ok := tbl.Route("T")
	if !ok {
		t.Fatal("no route")
	}
	r.BrokerDatas[0].BrokerAddrs[0] = "evil"
	r.QueueDatas[0].Perm = 0
	r2, _ := tbl.Route("T")
	if r2.BrokerDatas[0].BrokerAddrs[0] != "1.1.1.1:10911" || r2.QueueDatas[0].Perm != 6 {
		t.Fatalf("route shares memory with the table: %+v", r2)
	}
	ci := tbl.ClusterInfo()
	ci.BrokerAddrTable["a"].BrokerAddrs[0] = "evil"
	if tbl.ClusterInfo().BrokerAddrTable["a"].BrokerAddrs[0] != "1.1.1.1:10911" {
		t.Fatal("cluster info shares memory with the table")
	}
}

// TestRemoveConnIgnoresNil checks that an untracked registration is not
// removed by closing "no connection".
func TestRemoveConnIgnoresNil(t *testing.T) {
	tbl := NewTable()
	tbl.Register(Registration{ClusterName: "c", BrokerName: "a", BrokerAddr: "x:1"}, time.Now())
	if got := tbl.RemoveConn(nil); got != nil {
		t.Fatalf("RemoveConn(nil) = %v", got)
	}
	if len(tbl.LiveBrokers()) != 1 {
		t.Fatal("broker removed")
	}
}

// TestRouteOfUnknownGroupIsNotExist covers the second TOPIC_NOT_EXIST rule:
// queue data whose broker groups are all unknown gives no route. The table
// never builds that state itself, so the test plants it.
func TestRouteOfUnknownGroupIsNotExist(t *testing.T) {
	tbl := NewTable()
	tbl.mu.topics["T"] = map[string]*QueueData{"ghost": {BrokerName: "ghost", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}}
	if r, ok := tbl.Route("T"); ok {
		t.Fatalf("route %+v for a topic of an unknown group", r)
	}
	if err := tbl.checkInvariants(); err == nil {
		t.Fatal("invariant check missed queue data of an unknown group")
	}
}
