package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rocketd/rocketd/internal/config"
)

// startRocketMQProxy starts Apache RocketMQ's gRPC side as its quick start
// does in Local mode: the NameServer, and ProxyStartup -pm local, which runs
// the broker (the same broker.conf as the rocketmq-async target) inside the
// proxy's JVM and serves gRPC on its own port. The proxy's remoting port
// (8080 by default) is moved to a free port too.
func (h *harness) startRocketMQProxy(ctx context.Context, dir string) (*server, error) {
	lib, err := h.ensureRocketMQ(ctx)
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	nsPort, brokerPort, grpcPort, proxyRemotingPort := ports[0], ports[1], ports[2], ports[3]
	home := filepath.Join(dir, "home") // ROCKETMQ_HOME and user.home: logs stay in dir
	if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
		return nil, err
	}
	// ProxyStartup 5.2.0 loads the plain ACL validator even with ACL off,
	// and it refuses to start without $ROCKETMQ_HOME/conf/plain_acl.yml
	// (the distribution ships one): an empty one.
	if err := os.WriteFile(filepath.Join(home, "conf", "plain_acl.yml"), []byte("globalWhiteRemoteAddresses: []\naccounts: []\n"), 0o644); err != nil {
		return nil, err
	}
	nsConf := filepath.Join(dir, "namesrv.conf")
	if err := os.WriteFile(nsConf, []byte("listenPort="+strconv.Itoa(nsPort)+"\n"), 0o644); err != nil {
		return nil, err
	}
	brokerConf := filepath.Join(dir, "broker.conf")
	if err := os.WriteFile(brokerConf, []byte(rocketmqBrokerConf(nsPort, brokerPort, filepath.Join(dir, "store"), config.AsyncFlush)), 0o644); err != nil {
		return nil, err
	}
	// rmq-proxy.json, ProxyConfig's fields (proxy/src/main/java/.../config/ProxyConfig.java).
	proxyConf := filepath.Join(dir, "rmq-proxy.json")
	js, err := json.Marshal(map[string]any{
		"rocketMQClusterName": "DefaultCluster",
		"namesrvAddr":         "127.0.0.1:" + strconv.Itoa(nsPort),
		"grpcServerPort":      grpcPort,
		"remotingListenPort":  proxyRemotingPort,
	})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(proxyConf, js, 0o644); err != nil {
		return nil, err
	}
	s := &server{addr: "127.0.0.1:" + strconv.Itoa(nsPort), grpc: "127.0.0.1:" + strconv.Itoa(grpcPort)}
	start := time.Now()
	if err := s.startProcess(javaCmd(lib, home, namesrvHeap, "org.apache.rocketmq.namesrv.NamesrvStartup", "-c", nsConf),
		filepath.Join(dir, "namesrv.log")); err != nil {
		return nil, err
	}
	if err := s.startProcess(javaCmd(lib, home, brokerHeap, "org.apache.rocketmq.proxy.ProxyStartup",
		"-pm", "local", "-pc", proxyConf, "-bc", brokerConf), filepath.Join(dir, "proxy.log")); err != nil {
		s.stop(10 * time.Second)
		return nil, err
	}
	if err := s.waitTCP(s.grpc, 120*time.Second); err != nil {
		s.stop(10 * time.Second)
		return nil, fmt.Errorf("rocketmq proxy: %w (logs under %s)", err, dir)
	}
	s.startup = time.Since(start)
	return s, nil
}
