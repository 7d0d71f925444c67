package broker_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/console"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// TestConsoleTwoBrokers: the console shows every broker group the
// NameServer knows, and a topic it creates gets queues on each.
func TestConsoleTwoBrokers(t *testing.T) {
	c := startCluster(t, nil)
	bc := c.brokerConfig()
	bc.BrokerName = "broker-b"
	bc.StorePathRootDir = filepath.Join(c.dir, "store-b")
	b2, err := broker.Start(broker.Config{Broker: bc, ListenAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b2.Shutdown(ctx)
	})
	base := c.startConsole()
	var cl struct {
		Brokers []struct {
			Name    string            `json:"name"`
			Runtime map[string]string `json:"runtime"`
		} `json:"brokers"`
	}
	wait.For(t, 10*time.Second, "both brokers listed", func() bool {
		cl.Brokers = nil
		return consoleGet(t, base, "/api/cluster", &cl) == http.StatusOK && len(cl.Brokers) == 2
	})
	if cl.Brokers[0].Name != "broker-a" || cl.Brokers[1].Name != "broker-b" || cl.Brokers[1].Runtime["brokerRole"] == "" {
		t.Fatalf("brokers: %+v", cl.Brokers)
	}
	topic := uniq(t, "TB")
	code, out := consolePost(t, base, "/api/topics", `{"topic":"`+topic+`","readQueues":2,"writeQueues":2}`, nil)
	if code != http.StatusOK {
		t.Fatalf("create: %d %v", code, out)
	}
	if brokers, _ := out["brokers"].([]any); len(brokers) != 2 {
		t.Fatalf("created on %v, want both brokers", out["brokers"])
	}
	var ts struct {
		Queues []struct {
			Broker string `json:"broker"`
		} `json:"queues"`
	}
	wait.For(t, 10*time.Second, "4 queues over 2 brokers", func() bool {
		ts.Queues = nil
		return consoleGet(t, base, "/api/topic?topic="+topic, &ts) == http.StatusOK && len(ts.Queues) == 4
	})
	if ts.Queues[0].Broker != "broker-a" || ts.Queues[3].Broker != "broker-b" {
		t.Fatalf("queues: %+v", ts.Queues)
	}
	wait.For(t, 10*time.Second, "samples of both brokers", func() bool {
		var tp struct {
			Series []struct{ Broker string } `json:"series"`
		}
		consoleGet(t, base, "/api/throughput", &tp)
		return len(tp.Series) == 2
	})
}

// TestConsoleSignsWhenAuthenticationEnabled: with authenticationEnabled
// the broker's console signs its calls with consoleAccessKey/SecretKey and
// sees the cluster; a console with a wrong secret is refused (502 with the
// server's answer), never silently empty.
func TestConsoleSignsWhenAuthenticationEnabled(t *testing.T) {
	c := startAuthCluster(t, "", func(bc *config.BrokerConfig) {
		bc.ConsoleEnable = true
		bc.ConsoleListenAddr = "127.0.0.1:0"
		bc.ConsoleAccessKey, bc.ConsoleSecretKey = authAdmin.AccessKey, authAdmin.SecretKey
	})
	base := "http://" + c.b.ConsoleAddr()
	var topics struct{ Topics []string }
	if code := consoleGet(t, base, "/api/topics", &topics); code != http.StatusOK || len(topics.Topics) == 0 {
		t.Fatalf("signed topics: %d %v", code, topics.Topics)
	}
	var cl struct {
		Brokers []struct {
			Runtime map[string]string `json:"runtime"`
			Error   string            `json:"error"`
		} `json:"brokers"`
	}
	if code := consoleGet(t, base, "/api/cluster", &cl); code != http.StatusOK || len(cl.Brokers) != 1 || cl.Brokers[0].Error != "" {
		t.Fatalf("signed cluster: %d %+v", code, cl)
	}

	bad := auth.Credentials{AccessKey: authAdmin.AccessKey, SecretKey: "wrong"}
	srv, err := console.Start(console.Config{ListenAddr: "127.0.0.1:0", Namesrv: []string{c.nsAddr},
		Sign: func(cmd *remoting.Command) { bad.Sign(cmd) }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close(context.Background()) }()
	if code := consoleGet(t, "http://"+srv.Addr(), "/api/topics", nil); code != http.StatusBadGateway {
		t.Fatalf("wrong secret: %d, want 502", code)
	}
}

// TestConsoleHTTPSWhenTLSEnforcing: with tls.server.mode=enforcing the
// console serves HTTPS with the tls.server.* certificate (plain HTTP is
// refused) and reaches the cluster over TLS with the tls.client.* keys.
func TestConsoleHTTPSWhenTLSEnforcing(t *testing.T) {
	tlsCfg := enforcingTLS(t, "none")
	c := startCluster(t, func(bc *config.BrokerConfig) {
		bc.TLS = tlsCfg
		bc.ConsoleEnable = true
		bc.ConsoleListenAddr = "127.0.0.1:0"
	})
	ca, err := os.ReadFile(tlsCfg.ClientTrustCertPath)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("https://" + c.b.ConsoleAddr() + "/api/cluster")
	if err != nil {
		t.Fatal(err)
	}
	var cl struct {
		Brokers []struct {
			Runtime map[string]string `json:"runtime"`
		} `json:"brokers"`
	}
	err = json.NewDecoder(resp.Body).Decode(&cl)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || len(cl.Brokers) != 1 || cl.Brokers[0].Runtime["brokerRole"] == "" {
		t.Fatalf("HTTPS cluster: %d %v %+v", resp.StatusCode, err, cl)
	}
	if resp, err := http.Get("http://" + c.b.ConsoleAddr() + "/api/cluster"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP served while TLS is enforcing")
		}
	}
}
