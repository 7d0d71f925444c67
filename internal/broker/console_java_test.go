package broker_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/console"
	"github.com/rocketd/rocketd/internal/namesrv"
	"github.com/rocketd/rocketd/internal/testutil/proc"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// TestConsoleAgainstJavaBroker: the console is an admin client of any
// RocketMQ cluster, as the dashboard is. Against Apache RocketMQ 5.2.0's
// broker (registered with a rocketd NameServer) it lists the broker with
// its runtime info, charts Java's putTps, creates a topic, shows queue
// offsets, finds messages by key, by both ids and by queue offset, and
// shows a group's lag.
func TestConsoleAgainstJavaBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a JVM")
	}
	jars := javaJars(t)
	dir := t.TempDir()
	ns, err := namesrv.New(namesrv.Config{Addr: "127.0.0.1:0", Namesrv: config.NamesrvConfig{KVConfigPath: filepath.Join(dir, "kv.json")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ns.Shutdown(ctx)
	})
	port := proc.FreeBrokerPort(t)
	kv := map[string]string{
		"brokerClusterName": "JCluster", "brokerName": "java-a", "brokerId": "0", "brokerRole": "ASYNC_MASTER",
		"brokerIP1": "127.0.0.1", "namesrvAddr": ns.Addr(), "listenPort": strconv.Itoa(port),
		"haListenPort": strconv.Itoa(proc.FreePort(t)), "storePathRootDir": filepath.Join(dir, "store"),
		"storePathCommitLog": filepath.Join(dir, "store", "commitlog"), "mappedFileSizeCommitLog": strconv.Itoa(64 << 20),
		"timerWheelEnable": "false", "autoCreateTopicEnable": "true",
	}
	var conf strings.Builder
	for k, v := range kv {
		fmt.Fprintf(&conf, "%s=%s\n", k, v)
	}
	confPath := filepath.Join(dir, "broker.conf")
	if err := os.WriteFile(confPath, []byte(conf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	jb := proc.StartNamed(t, "java-broker", "java", "-Xms256m", "-Xmx512m", "-XX:MaxDirectMemorySize=512m",
		"--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
		"--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.util=ALL-UNNAMED",
		"--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
		"-Duser.home="+home, "-Drocketmq.home.dir="+home, "-cp", filepath.Join(jars, "*"),
		"org.apache.rocketmq.broker.BrokerStartup", "-c", confPath)
	jb.WaitTCP(t, "127.0.0.1:"+strconv.Itoa(port), 60*time.Second)

	srv, err := console.Start(console.Config{ListenAddr: "127.0.0.1:0", Namesrv: []string{ns.Addr()}, SampleInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	base := "http://" + srv.Addr()

	var cl struct {
		Brokers []struct {
			Name    string            `json:"name"`
			Runtime map[string]string `json:"runtime"`
		} `json:"brokers"`
	}
	wait.For(t, 60*time.Second, "the Java broker registered", func() bool {
		cl.Brokers = nil
		return consoleGet(t, base, "/api/cluster", &cl) == http.StatusOK && len(cl.Brokers) == 1 && cl.Brokers[0].Runtime["putTps"] != ""
	})
	topic := uniq(t, "JT")
	if code, out := consolePost(t, base, "/api/topics", `{"topic":"`+topic+`","cluster":"JCluster","readQueues":2,"writeQueues":2}`, nil); code != http.StatusOK {
		t.Fatalf("create on Java: %d %v", code, out)
	}
	var ts struct {
		Queues []struct{} `json:"queues"`
	}
	wait.For(t, 40*time.Second, "the topic routed with 2 queues", func() bool {
		ts.Queues = nil
		return consoleGet(t, base, "/api/topic?topic="+topic, &ts) == http.StatusOK && len(ts.Queues) == 2
	})

	p, err := producer.NewDefaultProducer(producer.WithNameServer([]string{ns.Addr()}), producer.WithGroupName(uniq(t, "jpg")),
		producer.WithInstanceName(uniq(t, "jp")), producer.WithRetry(2), producer.WithSendMsgTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })
	var sent []*primitive.SendResult
	for i := range 6 {
		m := primitive.NewMessage(topic, []byte("java-"+strconv.Itoa(i)))
		m.WithKeys([]string{"jk" + strconv.Itoa(i)})
		r, err := p.SendSync(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, r)
	}
	var ms consoleMessages
	wait.For(t, 20*time.Second, "key jk4 indexed", func() bool {
		ms = consoleMessages{}
		return consoleGet(t, base, "/api/messages?topic="+topic+"&key=jk4", &ms) == http.StatusOK && len(ms.Messages) == 1
	})
	if ms.Messages[0].Body != "java-4" {
		t.Fatalf("by key: %+v", ms)
	}
	for _, id := range []string{sent[2].OffsetMsgID, sent[2].MsgID} {
		ms = consoleMessages{}
		if code := consoleGet(t, base, "/api/message?topic="+topic+"&msgId="+id, &ms); code != http.StatusOK || len(ms.Messages) != 1 || ms.Messages[0].Body != "java-2" {
			t.Fatalf("by id %s: %d %+v", id, code, ms)
		}
	}
	ms = consoleMessages{}
	path := fmt.Sprintf("/api/message/at?topic=%s&queue=%d&offset=%d", topic, sent[5].MessageQueue.QueueId, sent[5].QueueOffset)
	if code := consoleGet(t, base, path, &ms); code != http.StatusOK || len(ms.Messages) != 1 || ms.Messages[0].Body != "java-5" {
		t.Fatalf("by queue offset: %d %+v", code, ms)
	}

	group := uniq(t, "JG")
	var got atomic.Int64
	pc, err := consumer.NewPushConsumer(consumer.WithNameServer([]string{ns.Addr()}), consumer.WithGroupName(group),
		consumer.WithInstance(uniq(t, "jc")), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Subscribe(topic, consumer.MessageSelector{}, func(_ context.Context, ms ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		got.Add(int64(len(ms)))
		return consumer.ConsumeSuccess, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	wait.For(t, 40*time.Second, "the group caught up (lag 0, one member)", func() bool {
		var g consoleGroup
		return got.Load() >= 6 && consoleGet(t, base, "/api/group?group="+group, &g) == http.StatusOK &&
			g.rows(topic) == 2 && g.TotalLag == 0 && len(g.Members) == 1
	})
	if err := shutdownSettled(pc, started); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte("more-"+strconv.Itoa(i)))); err != nil {
			t.Fatal(err)
		}
	}
	wait.For(t, 20*time.Second, "lag 3 on the Java broker", func() bool {
		var g consoleGroup
		consoleGet(t, base, "/api/group?group="+group, &g)
		return g.TotalLag == 3
	})
	wait.For(t, 20*time.Second, "Java's putTps charted", func() bool {
		var tp struct {
			Series []struct {
				Source string `json:"source"`
			} `json:"series"`
		}
		consoleGet(t, base, "/api/throughput", &tp)
		return len(tp.Series) == 1 && tp.Series[0].Source == "tps"
	})
	var backlog struct {
		Brokers []struct {
			Error string `json:"error"`
		} `json:"brokers"`
	}
	if code := consoleGet(t, base, "/api/backlog", &backlog); code != http.StatusOK || len(backlog.Brokers) != 1 {
		t.Fatalf("backlog on Java: %d %+v", code, backlog)
	}
	if backlog.Brokers[0].Error != "" {
		t.Logf("backlog on Java: %s", backlog.Brokers[0].Error)
	}
}
