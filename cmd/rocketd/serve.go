package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/namesrv"
)

func newServeCommand(root *rootOptions) *cobra.Command {
	var (
		dataDir     string
		namesrvPort int
		listenPort  int
		listenAddr  string
		confPath    string
		metricsOn   bool
		pprofOn     bool
		consoleOn   bool
		consoleAddr string
		grpcPort    int
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run NameServer and broker in one process (the embedded default)",
		Long: `Run the NameServer and one master broker in one process, data under --data,
until SIGINT or SIGTERM. Point any RocketMQ client at 127.0.0.1:9876.

The broker registers with the embedded NameServer and advertises brokerIP1
(127.0.0.1 unless broker.conf says otherwise: set brokerIP1 for clients on
other hosts). -c broker.conf may set any broker key; --data, --listen-port,
--namesrv-port and --listen-addr win over the file when given.

Listen address: every port (NameServer, broker, HA) listens on --listen-addr,
else broker.conf's bindAddress, else where the broker is advertised: on
127.0.0.1 while brokerIP1 is a loopback address (the default), on all
interfaces once brokerIP1 names another one. The first log line names the
addresses.

TLS: broker.conf's tls.* keys (RocketMQ's: tls.server.mode
disabled/permissive/enforcing, tls.test.mode.enable, tls.server.certPath,
tls.server.keyPath, tls.server.keyPassword, tls.server.need.client.auth,
tls.server.authClient, tls.server.trustCertPath, tls.config.file, tls.enable,
tls.client.*) apply to every listener of the process. The default is Java's:
permissive with a self-signed certificate.

Metrics: --metrics serves Prometheus metrics (RocketMQ 5's and
rocketmq-exporter's families) at http://127.0.0.1:5557/metrics, as
metricsExporterType=PROM does in broker.conf; metricsPromExporterHost and
metricsPromExporterPort move it. --pprof (metricsPprofEnable=true) adds
Go's profiler under /debug/pprof/ on that listener, and turns metrics on.

Layout of --data: namesrv/kvConfig.json, store/ (commitlog, consumequeue,
config/*.json, checkpoint, abort while running).

gRPC: the MessagingService of the RocketMQ 5 SDKs (Java's proxy in Local
mode) listens on bindAddress:grpcServerPort (--grpc-port, default 8081); broker.conf
grpcServerEnable=false turns it off.

Web console: --console (broker.conf consoleEnable=true) serves it on
--console-addr (consoleListenAddr, default 127.0.0.1:8082: loopback unless
configured). It shows the cluster, topics, consumer groups, messages, DLQ
and transaction/timer backlogs, and creates topics, resets offsets and
re-sends DLQ messages. It has no login of its own: keep it on loopback or
behind an authenticating proxy.

With authenticationEnabled=true in broker.conf all three check every
request against the users in store/config/users.json (created from
initAuthenticationUser and innerClientAuthenticationCredentials, which serve
then requires).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := root.logger()
			if err != nil {
				return err
			}
			abs, err := filepath.Abs(dataDir)
			if err != nil {
				return err
			}
			props := config.Properties{}
			// Without -c, UPDATE_BROKER_CONFIG persists the keys it changes
			// under the store (config.BrokerConfig.RuntimeConfigFile):
			// read them back. --data decides the store unless a -c file
			// moves it, and a -c file gets the updates itself.
			confFile := confPath
			if runtimeFile := filepath.Join(abs, "store", "config", "broker.properties"); confFile == "" && fileExists(runtimeFile) {
				confFile = runtimeFile
			}
			if confFile != "" {
				if props, err = config.LoadPropertiesFile(confFile); err != nil {
					return err
				}
			}
			f := cmd.Flags()
			// The embedded defaults, unless the file or a flag says otherwise.
			setProp(props, "storePathRootDir", filepath.Join(abs, "store"), f.Changed("data"))
			setProp(props, "listenPort", strconv.Itoa(listenPort), f.Changed("listen-port"))
			setProp(props, "namesrvAddr", "127.0.0.1:"+strconv.Itoa(namesrvPort), f.Changed("namesrv-port"))
			setProp(props, "brokerIP1", "127.0.0.1", false)
			if pprofOn {
				props["metricsPprofEnable"] = "true"
			}
			if metricsOn || pprofOn {
				props["metricsExporterType"] = config.MetricsProm
			}
			if f.Changed("console") {
				props["consoleEnable"] = strconv.FormatBool(consoleOn)
			}
			if f.Changed("console-addr") {
				props["consoleListenAddr"] = consoleAddr
			}
			// The RocketMQ 5 SDKs' gRPC service is on here unless the file
			// says otherwise.
			if _, set := props["grpcServerEnable"]; !set {
				props["grpcServerEnable"] = "true"
			}
			if f.Changed("grpc-port") {
				props["grpcServerPort"] = strconv.Itoa(grpcPort)
			}
			if f.Changed("listen-addr") {
				props["bindAddress"] = listenAddr
			} else if _, set := props["bindAddress"]; !set {
				props["bindAddress"] = serveBindAddress(props["brokerIP1"])
			}
			// The broker finds the NameServer where it listens.
			setProp(props, "namesrvAddr", net.JoinHostPort(dialHost(props["bindAddress"]), strconv.Itoa(namesrvPort)), f.Changed("namesrv-port") || f.Changed("listen-addr"))
			bc, unknown, err := config.BrokerConfigFromProperties(props)
			if err != nil {
				return err
			}
			nscfg := config.NamesrvConfig{
				BindAddress:  bc.BindAddress,
				ListenPort:   namesrvPort,
				KVConfigPath: filepath.Join(abs, "namesrv", "kvConfig.json"),
				// UPDATE_NAMESRV_CONFIG persists here; read back below.
				ConfigStorePath: filepath.Join(abs, "namesrv", "namesrv.properties"),
				TLS:             bc.TLS, // one process, one set of tls.* keys
			}
			if fileExists(nscfg.ConfigStorePath) {
				if nscfg, err = loadNamesrvRuntimeKeys(nscfg); err != nil {
					return err
				}
			}
			// The first line says where the process listens.
			log.Info("rocketd: serve listening",
				"namesrv", net.JoinHostPort(bc.BindAddress, strconv.Itoa(nscfg.ListenPort)),
				"broker", net.JoinHostPort(bc.BindAddress, strconv.Itoa(bc.ListenPort)),
				"ha", net.JoinHostPort(bc.BindAddress, strconv.Itoa(bc.HAPort())),
				"grpc", grpcListen(&bc),
				"tls", bc.TLS.Mode(), "advertised", bc.BrokerAddr())
			if len(unknown) > 0 {
				log.Warn("rocketd: unknown keys in config file ignored", "file", confPath, "keys", unknown)
			}
			if none := config.NoEffectBrokerKeys(props); len(none) > 0 {
				log.Warn("rocketd: "+config.NoEffectWarning, "file", confPath, "keys", none)
			}
			if err := os.MkdirAll(abs, 0o755); err != nil {
				return err
			}
			// One user table for both servers, so the NameServer accepts
			// what the broker does (its registrations included).
			acfg := bc.Auth
			acfg.ClusterName = bc.BrokerClusterName
			authn, _, err := auth.Setup(acfg, nil, broker.UsersPath(&bc), log)
			if err != nil {
				return err
			}
			if _, signed, _ := bc.Auth.ParseInnerCredentials(); authn != nil && !signed {
				return errors.New("rocketd serve: authenticationEnabled=true needs innerClientAuthenticationCredentials, " +
					"which the broker signs its registrations to the embedded NameServer with")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runServe(ctx, namesrv.Config{Namesrv: nscfg, Logger: log, Authenticator: authn},
				broker.Config{Broker: bc, ConfigFile: confPath, Logger: log, Authenticator: authn}, log)
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data", "./rocketd-data", "data directory (store, configs, namesrv KV config)")
	f.IntVar(&namesrvPort, "namesrv-port", config.DefaultNamesrvPort, "NameServer TCP port")
	f.IntVar(&listenPort, "listen-port", 10911, "broker TCP port (listenPort)")
	f.StringVar(&listenAddr, "listen-addr", "", "IP every port listens on (bindAddress); 0.0.0.0 for all interfaces (default: see above)")
	f.StringVarP(&confPath, "config", "c", "", "broker.conf properties file")
	f.BoolVar(&metricsOn, "metrics", false, "serve Prometheus metrics (metricsExporterType=PROM; default 127.0.0.1:5557)")
	f.BoolVar(&pprofOn, "pprof", false, "serve /debug/pprof/ on the metrics listener (metricsPprofEnable=true; implies --metrics)")
	f.BoolVar(&consoleOn, "console", false, "serve the web console (consoleEnable)")
	f.StringVar(&consoleAddr, "console-addr", config.DefaultConsoleListenAddr, "web console host:port (consoleListenAddr)")
	f.IntVar(&grpcPort, "grpc-port", config.DefaultGrpcServerPort, "gRPC MessagingService port of the RocketMQ 5 SDKs (grpcServerPort)")
	return cmd
}

// serveBindAddress is serve's default bindAddress: loopback while the
// broker is advertised on a loopback address, else all interfaces.
func serveBindAddress(brokerIP1 string) string {
	if ip, err := netip.ParseAddr(strings.TrimSpace(brokerIP1)); err == nil && !ip.IsLoopback() {
		return "0.0.0.0"
	}
	return "127.0.0.1"
}

// dialHost is the host to dial a listener bound to bind on: 127.0.0.1 for
// all interfaces.
func dialHost(bind string) string {
	if ip, err := netip.ParseAddr(bind); bind == "" || err == nil && ip.IsUnspecified() {
		return "127.0.0.1"
	}
	return bind
}

// setProp sets key in props when force is true or the file did not set it.
func setProp(props config.Properties, key, value string, force bool) {
	if _, set := props[key]; force || !set {
		props[key] = value
	}
}

// runServe starts the NameServer, then the broker (which registers with
// it), and on ctx's end stops them in the reverse order, so the broker's
// UNREGISTER_BROKER still reaches the NameServer.
func runServe(ctx context.Context, nscfg namesrv.Config, bcfg broker.Config, log *slog.Logger) error {
	ns, err := namesrv.New(nscfg)
	if err != nil {
		return err
	}
	if err := ns.Start(); err != nil {
		return err
	}
	log.Info("rocketd: NameServer ready", "addr", ns.Addr())
	b, err := broker.Start(bcfg)
	if err != nil {
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		return errors.Join(err, ns.Shutdown(sctx))
	}
	log.Info("rocketd: broker ready", "addr", b.Addr(), "store", bcfg.Broker.StorePathRootDir, "metrics", b.MetricsAddr())
	<-ctx.Done()
	log.Info("rocketd: shutting down", "grace", shutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	berr := b.Shutdown(sctx)
	nerr := ns.Shutdown(sctx)
	if err := errors.Join(berr, nerr); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("rocketd: stopped")
	return nil
}

// runBroker serves a broker alone until ctx's end.
func runBroker(ctx context.Context, bcfg broker.Config, log *slog.Logger) error {
	b, err := broker.Start(bcfg)
	if err != nil {
		return err
	}
	log.Info("rocketd: broker ready", "addr", b.Addr(), "store", bcfg.Broker.StorePathRootDir, "metrics", b.MetricsAddr())
	<-ctx.Done()
	log.Info("rocketd: shutting down", "grace", shutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace+5*time.Second)
	defer cancel()
	if err := b.Shutdown(sctx); err != nil {
		return fmt.Errorf("broker shutdown: %w", err)
	}
	log.Info("rocketd: stopped")
	return nil
}

// loadNamesrvRuntimeKeys applies the live keys UPDATE_NAMESRV_CONFIG wrote
// to c.ConfigStorePath (serve's NameServer has no config file of its own).
func loadNamesrvRuntimeKeys(c config.NamesrvConfig) (config.NamesrvConfig, error) {
	props, err := config.LoadPropertiesFile(c.ConfigStorePath)
	if err != nil {
		return c, err
	}
	live := config.Properties{}
	for _, k := range config.NamesrvLiveKeys {
		if v, ok := props[k.Key]; ok {
			live[k.Key] = v
		}
	}
	if _, err := config.Bind(live, &c); err != nil {
		return c, fmt.Errorf("%s: %w", c.ConfigStorePath, err)
	}
	return c, nil
}

// grpcListen is where the gRPC service listens, "off" when disabled.
func grpcListen(bc *config.BrokerConfig) string {
	if !bc.GrpcServerEnable {
		return "off"
	}
	return net.JoinHostPort(bc.BindAddress, strconv.Itoa(bc.GrpcServerPort))
}
