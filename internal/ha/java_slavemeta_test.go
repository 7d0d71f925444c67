package ha_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/proc"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// javaLib is where bench/compare keeps the Apache RocketMQ 5.2.0 jars
// (mvn -q -f bench/compare/rocketmq/pom.xml dependency:copy-dependencies
// -DoutputDirectory=<it>).
func javaLib(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err == nil {
		dir := filepath.Join(cache, "rocketd-bench", "rocketmq-5.2.0")
		if jars, _ := filepath.Glob(filepath.Join(dir, "rocketmq-broker-*.jar")); len(jars) > 0 {
			if _, err := exec.LookPath("java"); err == nil {
				return dir
			}
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("java and the RocketMQ 5.2.0 jars (see javaLib) are required")
	}
	t.Skip("java or the RocketMQ 5.2.0 jars (see javaLib) are missing")
	return ""
}

// startJavaBroker runs Apache RocketMQ's BrokerStartup with kv as its
// broker.conf (a small heap; logs under a test directory).
func startJavaBroker(t *testing.T, lib, name string, kv map[string]string) *proc.Process {
	t.Helper()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	kv["storePathRootDir"] = filepath.Join(dir, "store")
	kv["storePathCommitLog"] = filepath.Join(dir, "store", "commitlog")
	kv["mappedFileSizeCommitLog"] = strconv.Itoa(64 << 20)
	kv["timerWheelEnable"] = "false"
	conf := brokerConf(t, dir, kv)
	return proc.StartNamed(t, name, "java", "-Xms256m", "-Xmx512m", "-XX:MaxDirectMemorySize=512m",
		"--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
		"--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.util=ALL-UNNAMED",
		"--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
		"-Duser.home="+home, "-Drocketmq.home.dir="+home, "-cp", filepath.Join(lib, "*"),
		"org.apache.rocketmq.broker.BrokerStartup", "-c", conf)
}

// TestJavaInteropSlaveMetadata: the slave's metadata copy works across
// implementations both ways (rocketd's versioned requests are plain
// requests to Java, and rocketd answers Java's slave in full): a topic,
// a subscription group and a consumer offset created on the master reach
// the slave. A rocketd slave copies a Java master every 10 s; a Java
// 5.2.0 slave copies every 60 s (the first copy 10 s after it starts,
// skipped when it has no master address yet).
//
// Known gap: Java's slave asks GET_ALL_TOPIC_CONFIG on the master's VIP
// port (listenPort-2, MixAll.brokerVIPChannel), which rocketd does not
// serve yet, so a Java slave of a rocketd master copies groups and
// offsets but not topics; that part checks only groups and offsets.
func TestJavaInteropSlaveMetadata(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	lib := javaLib(t)
	bin := proc.Build(t, "github.com/rocketd/rocketd/cmd/rocketd")
	nsPort := proc.FreePort(t)
	nsAddr := "127.0.0.1:" + strconv.Itoa(nsPort)
	ns := proc.StartNamed(t, "namesrv", bin, "namesrv", "--port", strconv.Itoa(nsPort),
		"--kv-config", filepath.Join(t.TempDir(), "kvConfig.json"))
	ns.WaitLog(t, "NameServer ready", 20*time.Second)
	rc := remoting.NewClient(remoting.ClientConfig{})
	defer rc.Close()

	common := func(name, id, role string, port int) map[string]string {
		return map[string]string{"brokerClusterName": "JCluster", "brokerName": name, "brokerId": id,
			"brokerRole": role, "brokerIP1": "127.0.0.1", "namesrvAddr": nsAddr,
			"listenPort": strconv.Itoa(port), "haListenPort": strconv.Itoa(port + 1)}
	}
	rocketd := func(name string, kv map[string]string) *proc.Process {
		dir := t.TempDir()
		kv["storePathRootDir"] = filepath.Join(dir, "store")
		kv["mapedFileSizeCommitLog"] = strconv.Itoa(4 << 20)
		p := proc.StartNamed(t, name, bin, "broker", "-c", brokerConf(t, dir, kv))
		p.WaitLog(t, "broker ready", 20*time.Second)
		return p
	}
	check := func(t *testing.T, master, slave string, deadline time.Duration, withTopics bool) {
		topic, group := "JInterop"+strconv.FormatInt(time.Now().UnixNano()%1e9, 36), "JInteropGroup"
		th := protocol.CreateTopicRequestHeader{Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: 2, WriteQueueNums: 2,
			Perm: 6, TopicFilterType: protocol.SingleTag}
		if r, err := invoke(rc, master, protocol.UpdateAndCreateTopic, &th, nil); err != nil || r.Code != protocol.Success {
			t.Fatalf("create topic: %v %+v", err, r)
		}
		gc := protocol.NewSubscriptionGroupConfig(group)
		body, err := protocol.MarshalFastJSON(&gc)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := invoke(rc, master, protocol.UpdateAndCreateSubscriptionGroup, nil, body); err != nil || r.Code != protocol.Success {
			t.Fatalf("create group: %v %+v", err, r)
		}
		uh := protocol.UpdateConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: 1, CommitOffset: 0}
		if r, err := invoke(rc, master, protocol.UpdateConsumerOffset, &uh, nil); err != nil || r.Code != protocol.Success {
			t.Fatalf("commit offset: %v %+v", err, r)
		}
		start := time.Now()
		wait.For(t, deadline, "the slave to have the master's topic, group and offset", func() bool {
			if withTopics {
				r, err := invoke(rc, slave, protocol.GetAllTopicConfig, nil, nil)
				if err != nil || !bytes.Contains(r.Body, []byte(`"`+topic+`"`)) {
					return false
				}
			}
			r, err := invoke(rc, slave, protocol.GetAllSubscriptionGroupConfig, nil, nil)
			if err != nil || !bytes.Contains(r.Body, []byte(`"`+group+`"`)) {
				return false
			}
			r, err = invoke(rc, slave, protocol.GetAllConsumerOffset, nil, nil)
			return err == nil && bytes.Contains(r.Body, []byte(topic+"@"+group))
		})
		t.Logf("on the slave %v after the changes on the master", time.Since(start))
	}

	t.Run("JavaMasterRocketdSlave", func(t *testing.T) {
		mport, sport := proc.FreeBrokerPort(t, nsPort), proc.FreeBrokerPort(t, nsPort)
		master := startJavaBroker(t, lib, "java-master", common("jm", "0", "ASYNC_MASTER", mport))
		master.WaitTCP(t, "127.0.0.1:"+strconv.Itoa(mport), 120*time.Second)
		rocketd("rocketd-slave", common("jm", "1", "SLAVE", sport))
		check(t, "127.0.0.1:"+strconv.Itoa(mport), "127.0.0.1:"+strconv.Itoa(sport), 60*time.Second, true)
	})
	t.Run("RocketdMasterJavaSlave", func(t *testing.T) {
		mport, sport := proc.FreeBrokerPort(t, nsPort), proc.FreeBrokerPort(t, nsPort)
		rocketd("rocketd-master", common("rm", "0", "ASYNC_MASTER", mport))
		slave := startJavaBroker(t, lib, "java-slave", common("rm", "1", "SLAVE", sport))
		slave.WaitTCP(t, "127.0.0.1:"+strconv.Itoa(sport), 120*time.Second)
		check(t, "127.0.0.1:"+strconv.Itoa(mport), "127.0.0.1:"+strconv.Itoa(sport), 150*time.Second, false)
	})
}
