package broker_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// mqadmin runs Apache RocketMQ 5.2.0's mqadmin with args against the
// cluster's NameServer and returns its output.
func (c *cluster) mqadmin(jars string, args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	home := c.t.TempDir()
	all := append([]string{"-Xmx256m", "-Duser.home=" + home, "-Djava.io.tmpdir=" + home,
		"-Drocketmq.client.logRoot=" + home, "-cp", filepath.Join(jars, "*"),
		"org.apache.rocketmq.tools.command.MQAdminStartup"}, args...)
	all = append(all, "-n", c.nsAddr)
	out, err := exec.CommandContext(ctx, "java", all...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("mqadmin %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// staticMapping reads the broker's mapping of topic (GET_TOPIC_CONFIG
// lo=true, as mqadmin reads it).
func (c *cluster) staticMapping(topic string) *protocol.TopicQueueMappingDetail {
	c.t.Helper()
	r := c.invoke(c.b.Addr(), protocol.GetTopicConfig, &protocol.GetTopicConfigRequestHeader{Topic: topic, Lo: protocol.Some(true)}, nil)
	if r.Code != protocol.Success {
		c.t.Fatalf("GET_TOPIC_CONFIG %s: %d %s", topic, r.Code, r.Remark)
	}
	var v protocol.TopicConfigAndQueueMapping
	if err := protocol.UnmarshalFastJSON(r.Body, &v); err != nil {
		c.t.Fatal(err)
	}
	return v.MappingDetail
}

// TestStaticTopicMQAdminGoClient: mqadmin 5.2.0 updateStaticTopic creates
// a static topic of 2 logic queues on the one broker group; the official
// Go client sends to it and consumes everything; remappingStaticTopic
// onto the same broker moves to a new epoch and the queue offsets the
// sends get keep growing from where they were.
func TestStaticTopicMQAdminGoClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a JVM")
	}
	jars := javaJars(t)
	c := startCluster(t, nil)
	cluster := c.brokerConfig().BrokerClusterName
	topic := uniq(t, "static")

	out := c.mqadmin(jars, "updateStaticTopic", "-c", cluster, "-t", topic, "-qn", "2")
	if !strings.Contains(out, "The new mapping data is written to file") {
		t.Fatalf("updateStaticTopic:\n%s", out)
	}
	d := c.staticMapping(topic)
	if d == nil || d.TotalQueues != 2 || len(d.HostedQueues) != 2 || d.Bname != c.brokerConfig().BrokerName {
		t.Fatalf("mapping after updateStaticTopic: %+v", d)
	}
	epoch := d.Epoch
	c.waitRoute(topic, 2)

	p := c.newProducer()
	last := map[int]int64{} // logic queue -> last offset a send got
	send := func(prefix string, n int) {
		t.Helper()
		for i := range n {
			res, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte(fmt.Sprintf("%s-%d", prefix, i))))
			if err != nil {
				t.Fatalf("send %s-%d: %v", prefix, i, err)
			}
			q := res.MessageQueue.QueueId
			if q < 0 || q > 1 {
				t.Fatalf("send %s-%d went to queue %d of a 2-queue static topic", prefix, i, q)
			}
			if prev, ok := last[q]; ok && res.QueueOffset <= prev {
				t.Fatalf("send %s-%d: queue %d offset %d after %d", prefix, i, q, res.QueueOffset, prev)
			}
			last[q] = res.QueueOffset
		}
	}
	send("before", 20)
	rec := newReceived()
	c.newPushConsumer(uniq(t, "cg"), topic, "*", rec)
	wait.For(t, 60*time.Second, "the 20 messages", func() bool { return rec.len() == 20 })

	out = c.mqadmin(jars, "remappingStaticTopic", "-c", cluster, "-t", topic)
	if !strings.Contains(out, "The old mapping data is written to file") {
		t.Fatalf("remappingStaticTopic:\n%s", out)
	}
	if d = c.staticMapping(topic); d.Epoch <= epoch || len(d.HostedQueues) != 2 {
		t.Fatalf("mapping after remapping: epoch %d (was %d) %+v", d.Epoch, epoch, d)
	}
	send("after", 10)
	wait.For(t, 60*time.Second, "all 30 messages", func() bool { return rec.len() == 30 })
	for i := range 10 {
		if _, ok := rec.get(fmt.Sprintf("after-%d", i)); !ok {
			t.Fatalf("after-%d not consumed", i)
		}
	}
}
