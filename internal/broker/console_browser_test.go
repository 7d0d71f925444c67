package broker_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/chromedp/chromedp"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// chromiumPath finds Debian's Chromium. Under CI=true a missing browser is
// installed with apt-get (the way the task's machines get it) and a failed
// install fails the test; elsewhere the test is skipped.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "true" {
		t.Skip("chromium not installed (apt-get install -y chromium); CI=true installs it")
	}
	out, err := exec.Command("apt-get", "install", "-y", "chromium").CombinedOutput()
	if err != nil {
		t.Fatalf("CI=true: chromium missing and apt-get install -y chromium failed: %v\n%s", err, out)
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("CI=true: chromium still missing after apt-get: %v", err)
	}
	return p
}

// artefactDir is where screenshots go: $ROCKETD_ARTEFACTS/console when
// set, else the test's temporary directory.
func artefactDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("ROCKETD_ARTEFACTS"); d != "" {
		d = filepath.Join(d, "console")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// TestConsoleInBrowser loads every console page in headless Chromium
// against a broker with traffic, checks what they show (the topic, the
// lag of produced minus consumed, a looked-up body, the throughput chart),
// creates a topic and resets a group's offset by clicking, verifies both
// through the API, and saves a screenshot of each page.
func TestConsoleInBrowser(t *testing.T) {
	chromium := chromiumPath(t)
	shots := artefactDir(t)
	c := startCluster(t, nil)
	base := c.startConsole()

	// Traffic: 10 messages consumed by a group, then 5 more: lag 5.
	topic := uniq(t, "BT")
	c.createTopic(topic, 2)
	p := c.newProducer()
	for i := range 10 {
		m := primitive.NewMessage(topic, []byte("hello-"+strconv.Itoa(i)))
		m.WithKeys([]string{"k" + strconv.Itoa(i)})
		if _, err := p.SendSync(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	group := uniq(t, "BG")
	var got atomic.Int64
	pc := c.startPushConsumer(group, topic, "*", func(_ context.Context, ms ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		got.Add(int64(len(ms)))
		return consumer.ConsumeSuccess, nil
	})
	// The Go client commits offsets every 5 s; a loaded machine (the whole
	// suite under -race) takes several rounds.
	wait.For(t, 60*time.Second, "group caught up", func() bool {
		var g consoleGroup
		return got.Load() >= 10 && consoleGet(t, base, "/api/group?group="+group, &g) == http.StatusOK && g.rows(topic) == 2 && g.TotalLag == 0
	})
	if err := pc.Shutdown(); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte("later-"+strconv.Itoa(i)))); err != nil {
			t.Fatal(err)
		}
	}
	wait.For(t, 10*time.Second, "lag 5", func() bool {
		var g consoleGroup
		consoleGet(t, base, "/api/group?group="+group, &g)
		return g.TotalLag == 5
	})

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(bctx, 180*time.Second)
	defer cancel()

	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	shot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var buf []byte // quality 100: PNG
			if err := chromedp.FullScreenshot(&buf, 100).Do(ctx); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(shots, name+".png"), buf, 0o644)
		})
	}
	goTo := func(hash string) chromedp.Action {
		return chromedp.Evaluate(`location.hash = `+strconv.Quote(hash)+`; true`, nil)
	}
	// until waits for a JS condition to hold in the page.
	until := func(cond string) chromedp.Action {
		return chromedp.Poll(cond, nil, chromedp.WithPollingTimeout(60*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))
	}
	text := func(sel string) string {
		return `(document.querySelector(` + strconv.Quote(sel) + `)?.textContent || "")`
	}

	// Cluster: the broker and a drawn throughput chart.
	run("cluster page",
		chromedp.Navigate(base+"/#cluster"),
		until(text("#brokers tbody")+`.includes("broker-a")`),
		until(`document.querySelectorAll(".chart polyline").length > 0`),
		shot("cluster"))

	// Topics: the topic is listed; create another by clicking.
	created := uniq(t, "BC")
	run("topics page",
		goTo("#topics"),
		until(text("#topic-list")+`.includes(`+strconv.Quote(topic)+`)`),
		chromedp.SetValue(`#create-topic input[name=topic]`, created, chromedp.ByQuery),
		chromedp.SetValue(`#create-topic input[name=readQueues]`, "3", chromedp.ByQuery),
		chromedp.SetValue(`#create-topic input[name=writeQueues]`, "3", chromedp.ByQuery),
		chromedp.Click(`#create-topic-submit`, chromedp.ByQuery),
		until(text("#create-result")+`.includes("created `+created+`")`),
		until(text("#topic-list")+`.includes(`+strconv.Quote(created)+`)`),
		shot("topics"))
	var ts struct {
		Queues []struct{} `json:"queues"`
	}
	if code := consoleGet(t, base, "/api/topic?topic="+created, &ts); code != http.StatusOK || len(ts.Queues) != 3 {
		t.Fatalf("created topic: %d, %d queues, want 3", code, len(ts.Queues))
	}

	run("topic page",
		goTo("#topic/"+topic),
		until(`document.querySelectorAll("#topic-queues tbody tr").length === 2`),
		shot("topic"))

	// Group: lag 5 = 15 produced - 10 consumed; reset to the end by clicking.
	var lag string
	run("group page",
		goTo("#groups"),
		until(text("#group-list")+`.includes(`+strconv.Quote(group)+`)`),
		goTo("#group/"+group),
		until(text("#total-lag")+` !== ""`),
		chromedp.Text("#total-lag", &lag, chromedp.ByQuery),
		shot("group"))
	if lag != "5" {
		t.Fatalf("page shows lag %q, want 5", lag)
	}
	var resetText string
	// The form lists the group's topics (its %RETRY% topic too, once the
	// client committed an offset there); the reset is for topic, which the
	// page offers first.
	var selected string
	run("reset offset",
		chromedp.Value(`#reset-offset select[name="topic"]`, &selected, chromedp.ByQuery))
	if selected != topic {
		t.Fatalf("the reset form offers %q first, want %q", selected, topic)
	}
	run("reset offset",
		chromedp.Click(`#reset-offset-submit`, chromedp.ByQuery),
		until(text("#reset-result")+` !== ""`),
		chromedp.Text("#reset-result", &resetText, chromedp.ByQuery))
	if !strings.HasPrefix(resetText, "reset") {
		t.Fatalf("the reset click answered %q", resetText)
	}
	// The page redraws once, 300 ms after the answer; the lag it shows is
	// whatever the broker reported then. Wait for the broker, then load
	// the page again (through another page: the same hash does not redraw).
	wait.For(t, 60*time.Second, "lag 0 after the reset click", func() bool {
		var g consoleGroup
		return consoleGet(t, base, "/api/group?group="+group, &g) == http.StatusOK && g.TotalLag == 0
	})
	run("group page after the reset",
		goTo("#groups"),
		until(text("#group-list")+`.includes(`+strconv.Quote(group)+`)`),
		goTo("#group/"+group),
		until(text("#total-lag")+` === "0"`),
		shot("group-after-reset"))

	// Messages: look one up by key; its body shows.
	run("messages page",
		goTo("#messages"),
		chromedp.WaitVisible(`#by-key`, chromedp.ByQuery),
		chromedp.SetValue(`#by-key input[name=topic]`, topic, chromedp.ByQuery),
		chromedp.SetValue(`#by-key input[name=key]`, "k3", chromedp.ByQuery),
		chromedp.Click(`#by-key button`, chromedp.ByQuery),
		until(text("#message-results .msg-body")+` === "hello-3"`),
		shot("messages"))

	run("dlq page",
		goTo("#dlq"),
		chromedp.SetValue(`#dlq-form input[name=group]`, group, chromedp.ByQuery),
		chromedp.Click(`#dlq-form button`, chromedp.ByQuery),
		until(text("#dlq-results")+`.includes("0 message(s)")`),
		shot("dlq"))

	run("backlog page",
		goTo("#backlog"),
		until(text("#backlog tbody")+`.includes("broker-a")`),
		shot("backlog"))
	if t.Failed() {
		return
	}
	entries, _ := os.ReadDir(shots)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	t.Logf("screenshots in %s: %s", shots, strings.Join(names, " "))
}
