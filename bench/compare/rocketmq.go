package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rocketd/rocketd/internal/config"
)

// rocketmqVersion is the Apache RocketMQ release rocketmq/pom.xml fetches.
// (5.3.x's rocketmq-namesrv jar was not reachable from the Maven mirror of
// the machine these figures were first taken on; 5.2.0 is the newest release
// whose NameServer and broker both were.)
const rocketmqVersion = "5.2.0"

// JVM settings: a heap that fits a 2-core / 24 GiB machine next to the
// others (the scripts' defaults are 8 GiB for the broker), G1 as
// runbroker.sh uses, and the module openings RocketMQ needs on Java 17 to
// unmap its files.
var (
	jvmOpens = []string{
		"--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
		"--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.util=ALL-UNNAMED",
		"--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
	}
	namesrvHeap = []string{"-Xms512m", "-Xmx512m"}
	brokerHeap  = []string{"-Xms4g", "-Xmx4g", "-XX:+UseG1GC", "-XX:MaxDirectMemorySize=4g"}
)

// ensureRocketMQ returns the directory holding the RocketMQ jars, fetching
// them through Maven on first use (and again when a cache filled before
// rocketmq/pom.xml listed the proxy lacks it).
func (h *harness) ensureRocketMQ(ctx context.Context) (string, error) {
	dir := h.rocketmqLib
	broker, _ := filepath.Glob(filepath.Join(dir, "rocketmq-broker-*.jar"))
	proxy, _ := filepath.Glob(filepath.Join(dir, "rocketmq-proxy-*.jar"))
	if len(broker) > 0 && len(proxy) > 0 {
		return dir, nil
	}
	pom := filepath.Join(h.root, "bench", "compare", "rocketmq", "pom.xml")
	h.logf("fetching Apache RocketMQ %s jars through Maven into %s", rocketmqVersion, dir)
	start := time.Now()
	if _, err := run(ctx, "mvn", "-q", "-f", pom, "dependency:copy-dependencies", "-DoutputDirectory="+dir); err != nil {
		return "", fmt.Errorf("rocketmq jars: %w", err)
	}
	h.logf("fetched in %s", time.Since(start).Round(time.Second))
	return dir, nil
}

// startRocketMQ starts the official NameServer and broker with a fresh
// store under dir.
func (h *harness) startRocketMQ(ctx context.Context, dir string, flush config.FlushDiskType) (*server, error) {
	lib, err := h.ensureRocketMQ(ctx)
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	nsPort, brokerPort := ports[0], ports[1]
	home := filepath.Join(dir, "home") // ROCKETMQ_HOME and user.home: logs stay in dir
	store := filepath.Join(dir, "store")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	nsConf := filepath.Join(dir, "namesrv.conf")
	if err := os.WriteFile(nsConf, []byte("listenPort="+strconv.Itoa(nsPort)+"\n"), 0o644); err != nil {
		return nil, err
	}
	brokerConf := filepath.Join(dir, "broker.conf")
	if err := os.WriteFile(brokerConf, []byte(rocketmqBrokerConf(nsPort, brokerPort, store, flush)), 0o644); err != nil {
		return nil, err
	}
	java := func(heap []string, class, conf string) *exec.Cmd { return javaCmd(lib, home, heap, class, "-c", conf) }
	s := &server{addr: "127.0.0.1:" + strconv.Itoa(nsPort), broker: "127.0.0.1:" + strconv.Itoa(brokerPort)}
	start := time.Now()
	if err := s.startProcess(java(namesrvHeap, "org.apache.rocketmq.namesrv.NamesrvStartup", nsConf), filepath.Join(dir, "namesrv.log")); err != nil {
		return nil, err
	}
	if err := s.startProcess(java(brokerHeap, "org.apache.rocketmq.broker.BrokerStartup", brokerConf), filepath.Join(dir, "broker.log")); err != nil {
		s.stop(10 * time.Second)
		return nil, err
	}
	if err := s.waitTCP("127.0.0.1:"+strconv.Itoa(brokerPort), 120*time.Second); err != nil {
		s.stop(10 * time.Second)
		return nil, fmt.Errorf("rocketmq: %w (logs under %s)", err, dir)
	}
	s.startup = time.Since(start)
	return s, nil
}

// rocketmqBrokerConf is the broker.conf of a RocketMQ broker on brokerPort
// with its store under store.
func rocketmqBrokerConf(nsPort, brokerPort int, store string, flush config.FlushDiskType) string {
	return strings.Join([]string{
		"brokerClusterName=DefaultCluster", "brokerName=broker-a", "brokerId=0",
		"listenPort=" + strconv.Itoa(brokerPort),
		"namesrvAddr=127.0.0.1:" + strconv.Itoa(nsPort),
		"brokerIP1=127.0.0.1",
		"storePathRootDir=" + store, "storePathCommitLog=" + filepath.Join(store, "commitlog"),
		"flushDiskType=" + string(flush),
		"autoCreateTopicEnable=true",
	}, "\n") + "\n"
}

// javaCmd runs class of the RocketMQ jars in lib with heap, ROCKETMQ_HOME
// and user.home at home (where RocketMQ writes its logs).
func javaCmd(lib, home string, heap []string, class string, args ...string) *exec.Cmd {
	jargs := append(append(append([]string{}, heap...), jvmOpens...), "-Duser.home="+home, "-cp", filepath.Join(lib, "*"), class)
	cmd := exec.Command("java", append(jargs, args...)...)
	cmd.Env = append(os.Environ(), "ROCKETMQ_HOME="+home)
	return cmd
}
