package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // the rocketd-pprof child serves the profiles
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/namesrv"
)

// startRocketd starts `rocketd serve` (or, profiling, this binary's
// rocketd-pprof child) with a fresh data dir under dir; with grpc its gRPC
// MessagingService on a free port (--grpc-port), else none.
func (h *harness) startRocketd(dir string, flush config.FlushDiskType, grpc bool) (*server, error) {
	ports, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	nsPort, brokerPort, pprofPort, grpcPort := ports[0], ports[1], ports[2], ports[3]
	conf := filepath.Join(dir, "broker.conf")
	// No gRPC listener unless asked (it would take port 8081).
	text := "flushDiskType=" + string(flush) + "\ngrpcServerEnable=" + strconv.FormatBool(grpc) + "\n"
	s := &server{addr: "127.0.0.1:" + strconv.Itoa(nsPort), broker: "127.0.0.1:" + strconv.Itoa(brokerPort)}
	if h.metricsPprof && h.profileDir == "" {
		// The scale curves read the RSS after a forced GC (settled).
		text += "metricsExporterType=PROM\nmetricsPromExporterPort=" + strconv.Itoa(pprofPort) + "\nmetricsPprofEnable=true\n"
		s.pprof = "127.0.0.1:" + strconv.Itoa(pprofPort)
	}
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return nil, err
	}
	args := []string{"--data", filepath.Join(dir, "data"), "-c", conf,
		"--namesrv-port", strconv.Itoa(nsPort), "--listen-port", strconv.Itoa(brokerPort)}
	if grpc {
		s.grpc = "127.0.0.1:" + strconv.Itoa(grpcPort)
		args = append(args, "--grpc-port", strconv.Itoa(grpcPort))
	}
	var cmd *exec.Cmd
	if h.profileDir != "" {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		s.pprof = "127.0.0.1:" + strconv.Itoa(pprofPort)
		cmd = exec.Command(self, append([]string{"rocketd-pprof", "--pprof", s.pprof}, args...)...)
	} else {
		level := "warn"
		if h.metricsPprof {
			level = "info" // the scale runs: the recovery's steps with their times
		}
		cmd = exec.Command(h.rocketd, append([]string{"serve", "--log-level", level}, args...)...)
	}
	start := time.Now()
	if err := s.startProcess(cmd, filepath.Join(dir, "rocketd.log")); err != nil {
		return nil, err
	}
	ready := "127.0.0.1:" + strconv.Itoa(brokerPort)
	if grpc {
		ready = s.grpc
	}
	if err := s.waitTCP(ready, 60*time.Second); err != nil {
		s.stop(10 * time.Second)
		return nil, fmt.Errorf("rocketd: %w (log: %s)", err, filepath.Join(dir, "rocketd.log"))
	}
	s.startup = time.Since(start)
	return s, nil
}

// rocketdPprofMain is the `rocketd-pprof` child: the NameServer and broker
// `rocketd serve` runs, in this process, with net/http/pprof on --pprof.
func rocketdPprofMain(args []string) error {
	var dataDir, conf, pprofAddr string
	var nsPort, brokerPort, grpcPort int
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--data":
			dataDir = args[i+1]
		case "-c":
			conf = args[i+1]
		case "--pprof":
			pprofAddr = args[i+1]
		case "--namesrv-port":
			nsPort, _ = strconv.Atoi(args[i+1])
		case "--listen-port":
			brokerPort, _ = strconv.Atoi(args[i+1])
		case "--grpc-port":
			grpcPort, _ = strconv.Atoi(args[i+1])
		default:
			return fmt.Errorf("rocketd-pprof: unknown flag %s", args[i])
		}
	}
	props, err := config.LoadPropertiesFile(conf)
	if err != nil {
		return err
	}
	props["storePathRootDir"] = filepath.Join(dataDir, "store")
	props["listenPort"] = strconv.Itoa(brokerPort)
	props["namesrvAddr"] = "127.0.0.1:" + strconv.Itoa(nsPort)
	props["brokerIP1"] = "127.0.0.1"
	if grpcPort > 0 {
		props["grpcServerPort"] = strconv.Itoa(grpcPort)
	}
	bc, _, err := config.BrokerConfigFromProperties(props)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ln, err := net.Listen("tcp", pprofAddr)
	if err != nil {
		return err
	}
	hs := &http.Server{ReadHeaderTimeout: 5 * time.Second} // DefaultServeMux: net/http/pprof
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	ns, err := namesrv.New(namesrv.Config{Logger: log, Namesrv: config.NamesrvConfig{ListenPort: nsPort,
		KVConfigPath: filepath.Join(dataDir, "namesrv", "kvConfig.json")}})
	if err != nil {
		return err
	}
	if err := ns.Start(); err != nil {
		return err
	}
	b, err := broker.Start(broker.Config{Broker: bc, Logger: log})
	if err != nil {
		return errors.Join(err, ns.Close())
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return errors.Join(b.Shutdown(sctx), ns.Shutdown(sctx))
}
