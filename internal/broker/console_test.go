package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/console"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// startConsole serves a console for the cluster on an ephemeral loopback
// port, sampling every 100 ms; it stops at cleanup.
func (c *cluster) startConsole() string {
	c.t.Helper()
	srv, err := console.Start(console.Config{ListenAddr: "127.0.0.1:0", Namesrv: []string{c.nsAddr}, SampleInterval: 100 * time.Millisecond})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			c.t.Errorf("console close: %v", err)
		}
	})
	return "http://" + srv.Addr()
}

// consoleGet GETs path and decodes the JSON answer into v; it returns the
// HTTP status.
func consoleGet(t testing.TB, base, path string, v any) int {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if v != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %v: %s", path, err, body)
		}
	}
	if resp.StatusCode != http.StatusOK {
		t.Logf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	return resp.StatusCode
}

// consolePost POSTs body as a write action; hdr adjusts the headers (nil:
// the console's own). It returns the status and the decoded answer.
func consolePost(t testing.TB, base, path, body string, hdr func(http.Header)) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Rocketd-Console", "1")
	if hdr != nil {
		hdr(req.Header)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

type consoleMessage struct {
	Topic        string            `json:"topic"`
	MsgID        string            `json:"msgId"`
	UniqKey      string            `json:"uniqKey"`
	Keys         string            `json:"keys"`
	QueueID      int32             `json:"queueId"`
	QueueOffset  int64             `json:"queueOffset"`
	Compressed   bool              `json:"compressed"`
	Body         string            `json:"body"`
	BodyEncoding string            `json:"bodyEncoding"`
	Properties   map[string]string `json:"properties"`
}

type consoleMessages struct {
	Messages []consoleMessage `json:"messages"`
}

type consoleGroup struct {
	TotalLag int64 `json:"totalLag"`
	Members  []struct {
		ClientID string `json:"clientId"`
	} `json:"members"`
	Progress []struct {
		Topic          string `json:"topic"`
		QueueID        int32  `json:"queueId"`
		BrokerOffset   int64  `json:"brokerOffset"`
		ConsumerOffset int64  `json:"consumerOffset"`
		Lag            int64  `json:"lag"`
	} `json:"progress"`
}

// rows counts the progress rows of topic: the group's retry topic has
// rows of its own once the consumer's offset of it is committed.
func (g *consoleGroup) rows(topic string) int {
	n := 0
	for _, r := range g.Progress {
		if r.Topic == topic {
			n++
		}
	}
	return n
}

// TestConsoleAPI drives the console's JSON API against a real broker with
// traffic from the official Go client: topic creation and status, group
// lag and reset, message lookups (id, key, queue offset; text, binary and
// compressed bodies), throughput samples, backlog, DLQ listing and re-send.
func TestConsoleAPI(t *testing.T) {
	c := startCluster(t, nil)
	base := c.startConsole()
	topic := uniq(t, "CT")

	// Create a topic through the console.
	code, out := consolePost(t, base, "/api/topics", `{"topic":"`+topic+`","readQueues":4,"writeQueues":4}`, nil)
	if code != http.StatusOK {
		t.Fatalf("create topic: %d %v", code, out)
	}
	var topics struct{ Topics []string }
	wait.For(t, 10*time.Second, "topic listed", func() bool {
		consoleGet(t, base, "/api/topics", &topics)
		return containsString(topics.Topics, topic)
	})
	var ts struct {
		Queues []struct {
			QueueID   int32 `json:"queueId"`
			MaxOffset int64 `json:"maxOffset"`
		} `json:"queues"`
	}
	if code := consoleGet(t, base, "/api/topic?topic="+topic, &ts); code != http.StatusOK || len(ts.Queues) != 4 {
		t.Fatalf("topic status: %d %+v", code, ts)
	}

	// Traffic: text with keys, one binary body, one compressed body
	// (the Go client compresses bodies over 4 KiB).
	p := c.newProducer()
	var sent []*primitive.SendResult
	send := func(body []byte, key string) {
		m := primitive.NewMessage(topic, body)
		if key != "" {
			m.WithKeys([]string{key})
		}
		r, err := p.SendSync(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, r)
	}
	for i := range 8 {
		send([]byte("hello-"+strconv.Itoa(i)), "k"+strconv.Itoa(i))
	}
	binary := []byte{0xff, 0x00, 0xfe, 0x01}
	send(binary, "bin")
	big := strings.Repeat("compress me ", 500)
	send([]byte(big), "big")

	// The sampler saw the CommitLog grow.
	wait.For(t, 10*time.Second, "throughput sample", func() bool {
		var tp struct {
			Series []struct {
				Points []struct{ Bytes float64 } `json:"points"`
			} `json:"series"`
		}
		consoleGet(t, base, "/api/throughput", &tp)
		for _, s := range tp.Series {
			for _, pt := range s.Points {
				if pt.Bytes > 0 {
					return true
				}
			}
		}
		return false
	})

	// Lookups.
	var ms consoleMessages
	wait.For(t, 10*time.Second, "all 10 dispatched", func() bool { // dispatch (queues, index) is asynchronous
		ms = consoleMessages{}
		return consoleGet(t, base, "/api/messages?topic="+topic+"&key=big", &ms) == http.StatusOK && len(ms.Messages) == 1
	})
	ms = consoleMessages{}
	if code := consoleGet(t, base, "/api/messages?topic="+topic+"&key=k3", &ms); code != http.StatusOK || len(ms.Messages) != 1 || ms.Messages[0].Body != "hello-3" {
		t.Fatalf("by key: %d %+v", code, ms)
	}
	ms = consoleMessages{}
	if code := consoleGet(t, base, "/api/message?topic="+topic+"&msgId="+sent[8].OffsetMsgID, &ms); code != http.StatusOK ||
		len(ms.Messages) != 1 || ms.Messages[0].BodyEncoding != "base64" || ms.Messages[0].Body != "/wD+AQ==" {
		t.Fatalf("binary by offset id: %d %+v", code, ms)
	}
	ms = consoleMessages{}
	if code := consoleGet(t, base, "/api/message?topic="+topic+"&msgId="+sent[9].MsgID, &ms); code != http.StatusOK ||
		len(ms.Messages) != 1 || !ms.Messages[0].Compressed || ms.Messages[0].Body != big {
		t.Fatalf("compressed by uniq id: %d compressed=%v len=%d", code, len(ms.Messages) == 1 && ms.Messages[0].Compressed, len(ms.Messages))
	}
	first := sent[0]
	ms = consoleMessages{}
	path := "/api/message/at?topic=" + topic + "&queue=" + strconv.Itoa(first.MessageQueue.QueueId) + "&offset=" + strconv.FormatInt(first.QueueOffset, 10)
	if code := consoleGet(t, base, path, &ms); code != http.StatusOK || len(ms.Messages) != 1 || ms.Messages[0].Body != "hello-0" {
		t.Fatalf("by queue offset: %d %+v", code, ms)
	}
	if code := consoleGet(t, base, "/api/message/at?topic="+topic+"&queue=0&offset=99999", nil); code != http.StatusNotFound {
		t.Fatalf("offset past the end: %d, want 404", code)
	}

	// A group consumes everything, stops; 5 more are sent: lag 5.
	group := uniq(t, "CG")
	var got atomic.Int64
	pc := c.startPushConsumer(group, topic, "*", func(_ context.Context, ms ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		got.Add(int64(len(ms)))
		return consumer.ConsumeSuccess, nil
	})
	var g consoleGroup
	defer func() {
		if t.Failed() { // what the console last showed, for a timed-out wait
			t.Logf("last group state %+v; consumed %d", g, got.Load())
		}
	}()
	wait.For(t, 60*time.Second, "group caught up", func() bool {
		g = consoleGroup{}
		return consoleGet(t, base, "/api/group?group="+group, &g) == http.StatusOK && g.rows(topic) == 4 && g.TotalLag == 0 && got.Load() >= 10
	})
	if len(g.Members) != 1 {
		t.Fatalf("members: %+v", g.Members)
	}
	if err := pc.Shutdown(); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		send([]byte("later-"+strconv.Itoa(i)), "")
	}
	wait.For(t, 10*time.Second, "lag of 15 produced - 10 consumed = 5", func() bool {
		g = consoleGroup{}
		consoleGet(t, base, "/api/group?group="+group, &g)
		return g.TotalLag == 5
	})
	var tc struct {
		Consumers []string `json:"consumers"`
	}
	if consoleGet(t, base, "/api/topic?topic="+topic, &tc); !containsString(tc.Consumers, group) {
		t.Fatalf("consumers of %s: %v lack %s", topic, tc.Consumers, group)
	}
	var groups struct{ Groups []string }
	if consoleGet(t, base, "/api/groups", &groups); !containsString(groups.Groups, group) {
		t.Fatalf("groups %v lack %s", groups.Groups, group)
	}

	// Reset the group to the beginning: everything is lag again.
	code, out = consolePost(t, base, "/api/group/reset", `{"group":"`+group+`","topic":"`+topic+`","timestamp":0}`, nil)
	if code != http.StatusOK {
		t.Fatalf("reset: %d %v", code, out)
	}
	g = consoleGroup{}
	if consoleGet(t, base, "/api/group?group="+group, &g); g.TotalLag != 15 {
		t.Fatalf("lag after reset %d, want 15", g.TotalLag)
	}

	var backlog struct {
		Brokers []struct {
			Broker string `json:"broker"`
			Error  string `json:"error"`
		} `json:"brokers"`
	}
	if code := consoleGet(t, base, "/api/backlog", &backlog); code != http.StatusOK || len(backlog.Brokers) != 1 || backlog.Brokers[0].Error != "" {
		t.Fatalf("backlog: %d %+v", code, backlog)
	}
	var cl struct {
		Brokers []struct {
			Runtime map[string]string `json:"runtime"`
		} `json:"brokers"`
	}
	if code := consoleGet(t, base, "/api/cluster", &cl); code != http.StatusOK || len(cl.Brokers) != 1 || cl.Brokers[0].Runtime["commitLogMaxOffset"] == "" {
		t.Fatalf("cluster: %d %+v", code, cl)
	}
}

// TestConsoleDLQResend: a dead-lettered message is listed and re-sent to
// an online consumer of its group, which consumes it
// (CONSUME_MESSAGE_DIRECTLY, as rocketmq-dashboard does).
func TestConsoleDLQResend(t *testing.T) {
	c := startCluster(t, nil)
	base := c.startConsole()
	group := uniq(t, "DG")
	dlq := "%DLQ%" + group
	c.createTopic(dlq, 1)
	p := c.newProducer()
	r, err := p.SendSync(context.Background(), primitive.NewMessage(dlq, []byte("dead letter")))
	if err != nil {
		t.Fatal(err)
	}
	var ms consoleMessages
	wait.For(t, 10*time.Second, "DLQ listing", func() bool { // dispatch is asynchronous
		ms = consoleMessages{}
		return consoleGet(t, base, "/api/dlq?group="+group, &ms) == http.StatusOK && len(ms.Messages) == 1
	})
	if ms.Messages[0].Body != "dead letter" || ms.Messages[0].MsgID != r.OffsetMsgID {
		t.Fatalf("dlq: %+v", ms)
	}
	// No consumer online: 404 with the broker's code.
	if code, out := consolePost(t, base, "/api/dlq/resend", `{"group":"`+group+`","msgId":"`+r.OffsetMsgID+`"}`, nil); code != http.StatusNotFound {
		t.Fatalf("resend without consumer: %d %v", code, out)
	}
	// The Go client consumes a message handed to it directly only for a
	// topic it subscribes (Java's listener takes any): subscribe the DLQ,
	// let the ordinary delivery happen, then re-send: a second delivery.
	rec := newReceived()
	c.newPushConsumer(group, dlq, "*", rec)
	wait.For(t, 10*time.Second, "consumer online, first delivery", func() bool {
		var g consoleGroup
		return consoleGet(t, base, "/api/group?group="+group, &g) == http.StatusOK && len(g.Members) == 1 && rec.len() == 1
	})
	code, out := consolePost(t, base, "/api/dlq/resend", `{"group":"`+group+`","msgId":"`+ms.Messages[0].MsgID+`"}`, nil)
	if code != http.StatusOK || out["consumeResult"] != "CR_SUCCESS" {
		t.Fatalf("resend: %d %v", code, out)
	}
	rec.mu.Lock()
	deliveries := len(rec.seq)
	rec.mu.Unlock()
	if deliveries != 2 {
		t.Fatalf("%d deliveries of the dead letter, want 2 (ordinary + re-sent)", deliveries)
	}
}

// TestConsoleRefusesBadRequests: write actions without the CSRF proofs,
// wrong methods, oversized or malformed bodies, foreign Host names and bad
// parameters get a 4xx, and the console goes on serving.
func TestConsoleRefusesBadRequests(t *testing.T) {
	c := startCluster(t, nil)
	base := c.startConsole()
	body := `{"topic":"X1","readQueues":1,"writeQueues":1}`
	for _, tc := range []struct {
		name string
		hdr  func(http.Header)
		body string
		want int
	}{
		{"no custom header", func(h http.Header) { h.Del("X-Rocketd-Console") }, body, http.StatusForbidden},
		{"foreign origin", func(h http.Header) { h.Set("Origin", "http://evil.example") }, body, http.StatusForbidden},
		{"cross-site fetch", func(h http.Header) { h.Set("Sec-Fetch-Site", "cross-site") }, body, http.StatusForbidden},
		{"form post", func(h http.Header) { h.Set("Content-Type", "application/x-www-form-urlencoded") }, body, http.StatusUnsupportedMediaType},
		{"malformed JSON", nil, `{"topic":`, http.StatusBadRequest},
		{"unknown field", nil, `{"topic":"X1","readQueues":1,"writeQueues":1,"x":1}`, http.StatusBadRequest},
		{"oversized", nil, `{"topic":"` + strings.Repeat("a", 70<<10) + `"}`, http.StatusRequestEntityTooLarge},
		{"bad topic name", nil, `{"topic":"a b","readQueues":1,"writeQueues":1}`, http.StatusBadRequest},
		{"too many queues", nil, `{"topic":"X1","readQueues":100000,"writeQueues":1}`, http.StatusBadRequest},
	} {
		if code, out := consolePost(t, base, "/api/topics", tc.body, tc.hdr); code != tc.want {
			t.Errorf("%s: %d %v, want %d", tc.name, code, out, tc.want)
		}
	}
	if code := consoleGet(t, base, "/api/topics?x=1", nil); code != http.StatusOK {
		t.Fatalf("GET /api/topics: %d", code)
	}
	for path, want := range map[string]int{
		"/api/message/at?topic=T&queue=abc&offset=0":   http.StatusBadRequest,
		"/api/message?topic=T":                         http.StatusBadRequest,
		"/api/topic?topic=NoSuchTopic_" + uniq(t, "x"): http.StatusNotFound,
		"/api/group/reset":                             http.StatusMethodNotAllowed,
	} {
		if code := consoleGet(t, base, path, nil); code != want {
			t.Errorf("GET %s: %d, want %d", path, code, want)
		}
	}
	// DNS rebinding: a foreign Host name on the loopback console.
	req, _ := http.NewRequest(http.MethodGet, base+"/api/topics", nil)
	req.Host = "evil.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("foreign Host: %d", resp.StatusCode)
	}
	// A header block over the limit.
	req, _ = http.NewRequest(http.MethodGet, base+"/", nil)
	req.Header.Set("X-Big", strings.Repeat("b", 64<<10))
	if resp, err = http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("huge header: %d", resp.StatusCode)
		}
	}
	// Not HTTP at all.
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte("\x16\x03\x01 GARBAGE \x00\xff\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	reply, _ := io.ReadAll(conn)
	conn.Close()
	if !bytes.HasPrefix(reply, []byte("HTTP/1.1 400")) {
		t.Errorf("garbage: %q, want a 400", reply)
	}
	// Still serving, pages included.
	resp, err = http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(page, []byte("rocketd console")) || resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("index: %d %q", resp.StatusCode, resp.Header)
	}
}

// TestConsoleEnabledByConfig: consoleEnable starts the console with the
// broker on consoleListenAddr, and the broker's shutdown stops it.
func TestConsoleEnabledByConfig(t *testing.T) {
	c := startCluster(t, func(bc *config.BrokerConfig) {
		bc.ConsoleEnable = true
		bc.ConsoleListenAddr = "127.0.0.1:0"
	})
	addr := c.b.ConsoleAddr()
	if addr == "" {
		t.Fatal("no console address")
	}
	var cl struct {
		Brokers []struct {
			Name string `json:"name"`
		} `json:"brokers"`
	}
	if code := consoleGet(t, "http://"+addr, "/api/cluster", &cl); code != http.StatusOK || len(cl.Brokers) != 1 {
		t.Fatalf("cluster: %d %+v", code, cl)
	}
	c.stopBroker()
	if _, err := http.Get("http://" + addr + "/api/cluster"); err == nil {
		t.Fatal("console still serving after broker shutdown")
	}
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
