package broker_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// queryByKey does what Java's MQAdminImpl.queryMessage does (the Go v2
// client defines the QUERY_MESSAGE header but has no API that sends it):
// QUERY_MESSAGE to the master of every broker routing the topic, then
// keep the records whose KEYS hold key (unique: whose UNIQ_KEY is key).
// It returns the bodies, sorted.
func (c *cluster) queryByKey(topic, key string, unique bool) []string {
	c.t.Helper()
	r := c.invoke(c.nsAddr, protocol.GetRouteinfoByTopic, &protocol.GetRouteInfoRequestHeader{Topic: topic}, nil)
	if r.Code != protocol.Success {
		c.t.Fatalf("route of %s: %d %s", topic, r.Code, r.Remark)
	}
	var route protocol.TopicRouteData
	if err := protocol.UnmarshalFastJSON(r.Body, &route); err != nil {
		c.t.Fatal(err)
	}
	var bodies []string
	for _, bd := range route.BrokerDatas {
		addr, ok := bd.BrokerAddrs[0]
		if !ok {
			continue
		}
		h := protocol.QueryMessageRequestHeader{Topic: topic, Key: key, MaxNum: 32,
			BeginTimestamp: time.Now().Add(-time.Hour).UnixMilli(), EndTimestamp: 1<<63 - 1, UniqueKeyQuery: unique}
		resp := c.invoke(addr, protocol.QueryMessage, &h, nil)
		if resp.Code == protocol.QueryNotFound {
			continue
		}
		if resp.Code != protocol.Success {
			c.t.Fatalf("query %s on %s: %d %s", key, addr, resp.Code, resp.Remark)
		}
		for b := resp.Body; len(b) > 0; {
			rec, n, err := message.DecodeRecord(b, false)
			if err != nil {
				c.t.Fatalf("query body: %v", err)
			}
			b = b[n:]
			if unique {
				if v, _ := message.Property(rec.Properties, message.PropertyUniqClientMessageIDKeyIdx); v == key {
					bodies = append(bodies, string(rec.Body))
				}
				continue
			}
			keys, _ := message.Property(rec.Properties, message.PropertyKeys)
			if rec.Topic == topic && slices.Contains(strings.Split(keys, message.KeySeparator), key) {
				bodies = append(bodies, string(rec.Body))
			}
		}
	}
	slices.Sort(bodies)
	return bodies
}

// TestGoClientQueryByKeyAcrossRestart: messages the official Go client
// sent with keys are found by KEYS entry and by their message id
// (UNIQ_KEY), also after the broker restarts on the same store.
func TestGoClientQueryByKeyAcrossRestart(t *testing.T) {
	c := startCluster(t, func(bc *config.BrokerConfig) { bc.MaxHashSlotNum, bc.MaxIndexNum = 4096, 40000 })
	topic := uniq(t, "Q")
	c.createTopic(topic, 4)
	p := c.newProducer()
	shared := uniq(t, "shared")
	var ids []string
	for i := range 4 {
		m := primitive.NewMessage(topic, []byte(fmt.Sprintf("q-%d", i)))
		m.WithKeys([]string{fmt.Sprintf("gk-%d", i), shared})
		res, err := p.SendSync(context.Background(), m)
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("send %d: %v %+v", i, err, res)
		}
		ids = append(ids, res.MsgID)
	}
	check := func(when string) {
		t.Helper()
		wait.For(t, 10*time.Second, "index of the last message", func() bool {
			return len(c.queryByKey(topic, "gk-3", false)) == 1
		})
		if got := c.queryByKey(topic, "gk-1", false); !slices.Equal(got, []string{"q-1"}) {
			t.Fatalf("%s: by key gk-1: %v", when, got)
		}
		if got := c.queryByKey(topic, shared, false); !slices.Equal(got, []string{"q-0", "q-1", "q-2", "q-3"}) {
			t.Fatalf("%s: by shared key: %v", when, got)
		}
		if got := c.queryByKey(topic, ids[2], true); !slices.Equal(got, []string{"q-2"}) {
			t.Fatalf("%s: by message id %s: %v", when, ids[2], got)
		}
		if got := c.queryByKey(topic, "gk-9", false); len(got) != 0 {
			t.Fatalf("%s: absent key: %v", when, got)
		}
	}
	check("before restart")
	c.stopBroker()
	c.startBroker()
	check("after restart")
}
