package auth

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// TestCodeRulesNames: every row names its code as Java's RequestCode
// does (the request-code map), once, in code order.
func TestCodeRulesNames(t *testing.T) {
	prev := int32(-1)
	for _, r := range codeRules {
		info, ok := protocol.LookupRequestCode(r.code)
		if !ok || info.Name != r.name {
			t.Errorf("code %d: row says %s, the code map %q (%v)", r.code, r.name, info.Name, ok)
		}
		if r.code <= prev {
			t.Errorf("code %d after %d: not in code order or listed twice", r.code, prev)
		}
		prev = r.code
		if r.actions == 0 {
			t.Errorf("code %d: no actions", r.code)
		}
	}
}

func fmtChecks(cs []check) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s %s", c.key(), strings.Join(c.actions.Names(), "|")))
	}
	return strings.Join(parts, "; ")
}

// TestRequestChecks: what each kind of request is checked for, as Java's
// DefaultAuthorizationContextBuilder builds it.
func TestRequestChecks(t *testing.T) {
	req := func(code int32, ext map[string]string, body string) *remoting.Command {
		return remoting.NewRequest(code, ext, []byte(body))
	}
	kv := func(pairs ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(pairs); i += 2 {
			m[pairs[i]] = pairs[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name string
		req  *remoting.Command
		want string
	}{
		{"send", req(10, kv("topic", "T", "producerGroup", "pg"), ""), "Topic:T Pub"},
		{"send v2", req(310, kv("b", "T", "a", "pg"), ""), "Topic:T Pub"},
		{"batch", req(320, kv("b", "T", "a", "pg"), ""), "Topic:T Pub"},
		{"send to retry with group", req(310, kv("b", "%RETRY%cg", "a", "cg2"), ""), "Group:cg2 Sub"},
		{"send to retry without group", req(10, kv("topic", "%RETRY%cg"), ""), "Group:cg Sub"},
		{"route", req(105, kv("topic", "T"), ""), "Topic:T Pub|Sub|Get"},
		{"route of a retry topic", req(105, kv("topic", "%RETRY%cg"), ""), "Group:cg Sub|Get"},
		{"pull", req(11, kv("topic", "T", "consumerGroup", "cg"), ""), "Topic:T Sub; Group:cg Sub"},
		{"pull retry", req(11, kv("topic", "%RETRY%cg", "consumerGroup", "cg"), ""), "Group:cg Sub"},
		{"query offset", req(14, kv("topic", "T", "consumerGroup", "cg"), ""), "Topic:T Sub|Get; Group:cg Sub|Get"},
		{"update offset", req(15, kv("topic", "T", "consumerGroup", "cg"), ""), "Topic:T Sub|Update; Group:cg Sub|Update"},
		{"query message", req(12, kv("topic", "T"), ""), "Topic:T Sub|Get"},
		{"send back", req(36, kv("group", "cg", "originTopic", "T"), ""), "Group:cg Sub"},
		{"end txn", req(37, kv("topic", "T"), ""), "Topic:T Pub"},
		{"end txn without topic", req(37, kv("producerGroup", "pg"), ""), ""},
		{"unregister producer", req(35, kv("producerGroup", "pg"), ""), ""},
		{"unregister consumer", req(35, kv("consumerGroup", "cg"), ""), "Group:cg Sub"},
		{"consumer list", req(38, kv("consumerGroup", "cg"), ""), "Group:cg Sub|Get"},
		{"heartbeat", req(34, nil, `{"clientID":"c","producerDataSet":[{"groupName":"pg"}],"consumerDataSet":[{"groupName":"cg",`+
			`"subscriptionDataSet":[{"topic":"T","subString":"*"},{"topic":"%RETRY%cg","subString":"*"}]}]}`),
			"Group:cg Sub; Topic:T Sub"},
		{"lock", req(41, nil, `{"consumerGroup":"cg","clientId":"c","mqSet":[{"topic":"T","brokerName":"b","queueId":0}]}`),
			"Group:cg Sub; Topic:T Sub"},
		{"create topic", req(17, kv("topic", "T"), ""), "Topic:T Create"},
		{"delete group", req(207, kv("groupName", "cg"), ""), "Group:cg Delete"},
		{"consume stats", req(208, kv("consumerGroup", "cg", "topic", "T"), ""), "Group:cg Get; Topic:T Get"},
		{"correction offset split", req(308, kv("filterGroups", "a,,b", "compareGroup", "c", "topic", "T"), ""),
			"Group:a Get; Group:b Get; Group:c Get; Topic:T Get"},
		{"annotated retry topic", req(30, kv("topic", "%RETRY%cg"), ""), "Group:cg Get"},
		{"cluster code", req(3001, nil, ""), "Cluster:C Update"},
		{"cluster code naming its cluster", req(103, kv("clusterName", "other"), ""), "Cluster:other Update"},
		{"topic list: no resource, as Java", req(224, nil, ""), ""},
		{"not annotated", req(28, nil, ""), ""},
		{"create acl", req(3006, kv("subject", "User:x"), ""), "Cluster:C Update"},
		{"get acl", req(3009, kv("subject", "User:x"), ""), "Cluster:C Get"},
		// Java's gaps, closed by rocketd.
		{"lite pull, as a pull", req(361, kv("topic", "T", "consumerGroup", "cg"), ""), "Topic:T Sub; Group:cg Sub"},
		{"update broker config", req(25, nil, "flushIntervalCommitLog=100"), "Cluster:C Update"},
		{"create group", req(200, nil, `{"groupName":"cg"}`), "Cluster:C Create|Update"},
		{"all topic configs", req(21, nil, ""), "Cluster:C Get"},
		{"all group configs", req(201, nil, ""), "Cluster:C Get"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Read from the request, and from the fields the Guard
			// collects for authentication: the same checks.
			for _, v := range []extView{{req: tc.req}, {req: tc.req, fields: tc.req.AppendExt([]remoting.ExtEntry{})}} {
				got, err := requestChecks(nil, v, "C")
				if err != nil {
					t.Fatal(err)
				}
				if s := fmtChecks(got); s != tc.want {
					t.Fatalf("checks (fields collected: %v) = %q, want %q", v.fields != nil, s, tc.want)
				}
			}
		})
	}
}
