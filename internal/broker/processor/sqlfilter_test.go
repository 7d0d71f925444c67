package processor_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

func propertyFilterOn(c *config.BrokerConfig, _ *processor.Deps) { c.EnablePropertyFilter = true }

func checkClientBody(t *testing.T, exprType, expr string) []byte {
	t.Helper()
	b, err := json.Marshal(protocol.CheckClientRequestBody{ClientID: "c1", Group: "cg",
		SubscriptionData: &protocol.SubscriptionData{Topic: "T", SubString: expr, ExpressionType: exprType, SubVersion: 1}})
	must(t, err)
	return b
}

// TestCheckClientConfig: CHECK_CLIENT_CONFIG answers as Java's
// ClientManageProcessor.checkClientConfig, and a half-built request gets
// a code, never a crash.
func TestCheckClientConfig(t *testing.T) {
	off := newEnv(t, nil)
	on := newEnv(t, propertyFilterOn)
	cases := []struct {
		name   string
		e      *env
		body   []byte
		code   int32
		remark string
	}{
		{"tag", off, checkClientBody(t, "TAG", "a || b"), protocol.Success, ""},
		{"sql92 while disabled", off, checkClientBody(t, "SQL92", "a > 1"),
			protocol.SystemError, "The broker does not support consumer to filter message by SQL92"},
		{"sql92", on, checkClientBody(t, "SQL92", "a > 1 AND b = 'x'"), protocol.Success, ""},
		{"bad sql92", on, checkClientBody(t, "SQL92", "a >"), protocol.SubscriptionParseFailed, "Invalid MessageSelector."},
		{"unknown type", on, checkClientBody(t, "FOO", "a > 1"), protocol.SubscriptionParseFailed, "FOO"},
		{"no subscription", on, []byte(`{"clientId":"c1","group":"cg"}`), protocol.Success, ""},
		{"no body", on, nil, protocol.SystemError, "without a body"},
		{"not json", on, []byte("{nope"), protocol.SystemError, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.e.call(protocol.CheckClientConfig, nil, c.body)
			if r.Code != c.code || !strings.Contains(r.Remark, c.remark) {
				t.Fatalf("got %d %q, want %d with %q", r.Code, r.Remark, c.code, c.remark)
			}
		})
	}
}

// sendSQLMessages stores five messages on T/0 with property a = 1..5 and
// TAGS x for odd a, y for even.
func sendSQLMessages(t *testing.T, e *env, topic string) {
	t.Helper()
	for i := 1; i <= 5; i++ {
		tag := "x"
		if i%2 == 0 {
			tag = "y"
		}
		if r := e.send(sendHeader(topic, 0, "a\x01"+strconv.Itoa(i)+"\x02TAGS\x01"+tag), "m"+strconv.Itoa(i)); r.Code != protocol.Success {
			t.Fatal(r.Remark)
		}
	}
	e.waitMaxOffset(topic, 0, 5)
}

func sqlPull(group, topic, expr string) *protocol.PullMessageRequestHeader {
	h := pullHeader(group, topic, 0, 0, expr)
	h.ExpressionType = protocol.ExpressionSQL92
	return h
}

// TestPullSQL92Carried: a pull carrying a SQL92 expression gets only the
// matching messages (TAGS is a property like any other); a bad one gets
// SUBSCRIPTION_PARSE_FAILED; with enablePropertyFilter off, SYSTEM_ERROR.
func TestPullSQL92Carried(t *testing.T) {
	e := newEnv(t, propertyFilterOn)
	e.createTopic("T", 1)
	sendSQLMessages(t, e, "T")
	for expr, want := range map[string]string{
		"a > 3":                    "m4 m5",
		"a BETWEEN 2 AND 3":        "m2 m3",
		"TAGS = 'x' AND a <> 3":    "m1 m5",
		"b IS NULL AND a IN ('2')": "m2",
		// TAGS is no number: Java throws, which drops the message.
		"TAGS = 5 OR a > 0":              "",
		"a > 3 OR TAGS = 5":              "m4 m5",
		"NOT (TAGS CONTAINS 'x')":        "m2 m4",
		"a >= 1 AND TAGS STARTSWITH 'y'": "m2 m4",
	} {
		r := e.call(protocol.PullMessage, protocol.Ext(sqlPull("g", "T", expr)), nil)
		got := strings.Join(bodies(t, r.Body), " ")
		if got != want {
			t.Errorf("%q: %d %s %q, want %q", expr, r.Code, r.Remark, got, want)
		}
		if want == "" && r.Code != protocol.PullRetryImmediately {
			t.Errorf("%q: code %d, want PULL_RETRY_IMMEDIATELY", expr, r.Code)
		}
	}
	if r := e.call(protocol.PullMessage, protocol.Ext(sqlPull("g", "T", "a >")), nil); r.Code != protocol.SubscriptionParseFailed {
		t.Fatalf("bad expression: %d %s", r.Code, r.Remark)
	}

	off := newEnv(t, nil)
	off.createTopic("T", 1)
	r := off.call(protocol.PullMessage, protocol.Ext(sqlPull("g", "T", "a > 3")), nil)
	if r.Code != protocol.SystemError || !strings.Contains(r.Remark, "filter message by SQL92") {
		t.Fatalf("disabled: %d %s", r.Code, r.Remark)
	}
	// An empty expression is refused before the switch is looked at.
	if r := off.call(protocol.PullMessage, protocol.Ext(sqlPull("g", "T", " ")), nil); r.Code != protocol.SubscriptionParseFailed {
		t.Fatalf("empty expression: %d %s", r.Code, r.Remark)
	}
}

func sqlHeartbeat(t *testing.T, e *env, group string, subs ...protocol.SubscriptionData) {
	t.Helper()
	hb := protocol.HeartbeatData{ClientID: "1.2.3.4@1", ConsumerDataSet: []protocol.ConsumerData{{
		GroupName: group, ConsumeType: protocol.ConsumePassively, MessageModel: protocol.Clustering,
		ConsumeFromWhere: protocol.ConsumeFromFirstOffset, SubscriptionDataSet: subs,
	}}}
	b, err := protocol.MarshalFastJSON(&hb)
	must(t, err)
	if r := e.call(protocol.HeartBeat, nil, b); r.Code != protocol.Success {
		t.Fatalf("heartbeat: %d %s", r.Code, r.Remark)
	}
}

func sqlSub(topic, expr string, version int64) protocol.SubscriptionData {
	return protocol.SubscriptionData{Topic: topic, SubString: expr, SubVersion: version, ExpressionType: protocol.ExpressionSQL92,
		TagsSet: []string{}, CodeSet: protocol.CodeSet{}}
}

// TestPullSQL92FromHeartbeat: a push consumer's pull uses the expression
// its heartbeat registered (compiled once per subscription version);
// Java's FILTER_DATA_NOT_EXIST and FILTER_DATA_NOT_LATEST answer a bad or
// stale one.
func TestPullSQL92FromHeartbeat(t *testing.T) {
	e := newEnv(t, propertyFilterOn)
	e.createTopic("T", 1)
	sendSQLMessages(t, e, "T")
	pull := func(group string, version int64) ([]string, int32, string) {
		h := &protocol.PullMessageRequestHeader{ConsumerGroup: group, Topic: "T", MaxMsgNums: 32,
			ExpressionType: protocol.ExpressionSQL92, SubVersion: version}
		r := e.call(protocol.PullMessage, protocol.Ext(h), nil)
		return bodies(t, r.Body), r.Code, r.Remark
	}

	sqlHeartbeat(t, e, "good", sqlSub("T", "a > 3", 1))
	f1, ok := e.clients.FindFilter("good", "T")
	if !ok || f1.ClientVersion != 1 {
		t.Fatalf("no compiled filter after the heartbeat: %v %v", f1, ok)
	}
	if got, code, remark := pull("good", 1); code != protocol.Success || strings.Join(got, " ") != "m4 m5" {
		t.Fatalf("pull: %d %s %v", code, remark, got)
	}
	// The same version again is not compiled again.
	sqlHeartbeat(t, e, "good", sqlSub("T", "a > 3", 1))
	if f, _ := e.clients.FindFilter("good", "T"); f != f1 {
		t.Fatal("the same subscription version was compiled again")
	}
	if _, code, _ := pull("good", 2); code != protocol.SubscriptionNotLatest {
		t.Fatalf("newer subVersion: %d", code)
	}
	// Version 2 does not compile: the subscription moves on, the filter
	// stays at version 1.
	sqlHeartbeat(t, e, "good", sqlSub("T", "a > ", 2))
	if _, code, remark := pull("good", 2); code != protocol.FilterDataNotLatest {
		t.Fatalf("stale filter: %d %s", code, remark)
	}
	sqlHeartbeat(t, e, "good", sqlSub("T", "a < 3", 3))
	if got, code, remark := pull("good", 3); code != protocol.Success || strings.Join(got, " ") != "m1 m2" {
		t.Fatalf("pull v3: %d %s %v", code, remark, got)
	}

	sqlHeartbeat(t, e, "bad", sqlSub("T", "a = NULL", 1))
	if _, code, remark := pull("bad", 1); code != protocol.FilterDataNotExist || !strings.Contains(remark, "expression may be wrong") {
		t.Fatalf("bad expression: %d %s", code, remark)
	}
	// Back to TAG: the compiled filter goes.
	sqlHeartbeat(t, e, "good", protocol.SubscriptionData{Topic: "T", SubString: "*", SubVersion: 4, ExpressionType: "TAG",
		TagsSet: []string{}, CodeSet: protocol.CodeSet{}})
	if _, ok := e.clients.FindFilter("good", "T"); ok {
		t.Fatal("filter kept after the subscription became TAG")
	}
}

// TestPullSQL92Retry: with filterSupportRetry, a SQL92 pull of %RETRY%group
// judges each retried message by the group's filter of its RETRY_TOPIC;
// without it (Java's default) the retry subscription's own filter applies.
func TestPullSQL92Retry(t *testing.T) {
	for _, supportRetry := range []bool{true, false} {
		e := newEnv(t, func(c *config.BrokerConfig, _ *processor.Deps) {
			c.EnablePropertyFilter, c.FilterSupportRetry = true, supportRetry
		})
		retry := "%RETRY%cg"
		e.createTopic(retry, 1)
		for i := 1; i <= 5; i++ {
			props := "a\x01" + strconv.Itoa(i) + "\x02RETRY_TOPIC\x01T"
			if r := e.send(sendHeader(retry, 0, props), "m"+strconv.Itoa(i)); r.Code != protocol.Success {
				t.Fatal(r.Remark)
			}
		}
		e.waitMaxOffset(retry, 0, 5)
		e.createTopic("T", 1)
		sqlHeartbeat(t, e, "cg", sqlSub("T", "a > 3", 1), sqlSub(retry, "a < 3", 1))
		h := &protocol.PullMessageRequestHeader{ConsumerGroup: "cg", Topic: retry, MaxMsgNums: 32,
			ExpressionType: protocol.ExpressionSQL92, SubVersion: 1}
		r := e.call(protocol.PullMessage, protocol.Ext(h), nil)
		want := "m1 m2"
		if supportRetry {
			want = "m4 m5"
		}
		if got := strings.Join(bodies(t, r.Body), " "); got != want {
			t.Fatalf("filterSupportRetry=%v: %d %s %q, want %q", supportRetry, r.Code, r.Remark, got, want)
		}
	}
}

// TestLongPollSQL92WakesOnAdmittedTags: a held SQL92 pull that requires
// TAGS = 'b' is not woken by an 'a' message (a '*' pull held on the same
// queue is, in the same wake-up round), and is by a 'b' one.
func TestLongPollSQL92WakesOnAdmittedTags(t *testing.T) {
	e := newEnv(t, propertyFilterOn)
	e.createTopic("T", 1)
	hold := func(h *protocol.PullMessageRequestHeader) chan *remoting.Command {
		h.SysFlag |= protocol.PullFlagSuspend
		h.SuspendTimeoutMillis = 15000
		done := make(chan *remoting.Command, 1)
		must(t, e.rc.InvokeAsync(e.addr, remoting.NewRequest(protocol.PullMessage, protocol.Ext(h), nil), 30*time.Second,
			func(r *remoting.Command, err error) {
				if err != nil {
					t.Error(err)
				}
				done <- r
			}))
		return done
	}
	waitHeld := func(n int) {
		wait.For(t, 5*time.Second, fmt.Sprintf("%d held pulls", n), func() bool { return e.holder.Len() == n })
	}
	sqlDone := hold(sqlPull("gsql", "T", "TAGS = 'b' AND a > 0"))
	waitHeld(1)
	allDone := hold(pullHeader("gall", "T", 0, 0, "*"))
	waitHeld(2)

	e.send(sendHeader("T", 0, "TAGS\x01a\x02a\x011"), "a")
	select {
	case r := <-allDone:
		if got := bodies(t, r.Body); r.Code != protocol.Success || len(got) != 1 || got[0] != "a" {
			t.Fatalf("'*' pull: %d %s %v", r.Code, r.Remark, got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the '*' pull was not woken")
	}
	// The same wake-up round passed the SQL92 pull by.
	if n, st := e.holder.Len(), e.holder.Stats(); n != 1 || st.Arrived != 1 {
		t.Fatalf("after the 'a' message: %d held, %d woken; want the SQL92 pull still held", n, st.Arrived)
	}

	e.send(sendHeader("T", 0, "TAGS\x01b\x02a\x012"), "b")
	select {
	case r := <-sqlDone:
		if got := bodies(t, r.Body); r.Code != protocol.Success || len(got) != 1 || got[0] != "b" {
			t.Fatalf("SQL92 pull: %d %s %v", r.Code, r.Remark, got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the SQL92 pull was not woken by a matching message")
	}
}
