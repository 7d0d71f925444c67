package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/config"
)

func newBrokerCommand(root *rootOptions) *cobra.Command {
	var confPath, listenAddr string
	cmd := &cobra.Command{
		Use:   "broker",
		Short: "Run a master broker alone",
		Long: `Run one master broker until SIGINT or SIGTERM, configured by the broker.conf
given with -c (Java properties, RocketMQ's keys and defaults: brokerClusterName,
brokerName, brokerId, namesrvAddr, listenPort, brokerIP1, storePathRootDir,
mapedFileSizeCommitLog, flushDiskType, brokerRole, deleteWhen, fileReservedTime,
autoCreateTopicEnable, defaultTopicQueueNums, maxMessageSize, ...), plus
rocketd's own commitLogCorruptionAction: refuse (default: a corrupt CommitLog
record before durable data stops the start with an error naming the file and
offset) or truncate (cut the log there, logged at Error).

bindAddress names the IP the remoting and HA ports listen on (default: all
interfaces, as Java). RocketMQ's tls.* keys (tls.server.mode
disabled/permissive/enforcing, tls.test.mode.enable, tls.server.certPath,
tls.server.keyPath, tls.server.keyPassword, tls.server.need.client.auth,
tls.server.authClient, tls.server.trustCertPath, tls.config.file, tls.enable,
tls.client.*) set TLS on every port and on the calls to NameServers; the
default is Java's: permissive with a self-signed certificate.

UPDATE_BROKER_CONFIG (mqadmin updateBrokerConfig) writes the keys it
changes into the -c file, or without -c into
<storePathRootDir>/config/broker.properties, which the next start without -c
reads.

Unknown keys are warned about; a value that does not parse or cannot work
stops the start with an error naming the key. Without -c every default
applies (store in $HOME/store, no NameServer).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := root.logger()
			if err != nil {
				return err
			}
			bc := config.NewBrokerConfig()
			bc.EnsureDefaults()
			confFile := confPath
			if confFile == "" {
				// Without -c, UPDATE_BROKER_CONFIG persists here: read it back.
				if def := bc.RuntimeConfigFile(); fileExists(def) {
					confFile = def
					log.Info("rocketd: reading the keys updated at run time", "file", def)
				}
			}
			if confFile != "" {
				props, err := config.LoadPropertiesFile(confFile)
				if err != nil {
					return err
				}
				c, unknown, err := config.BrokerConfigFromProperties(props)
				if err != nil {
					return fmt.Errorf("%s: %w", confFile, err)
				}
				if len(unknown) > 0 {
					log.Warn("rocketd: unknown keys in config file ignored", "file", confFile, "keys", unknown)
				}
				if none := config.NoEffectBrokerKeys(props); len(none) > 0 {
					log.Warn("rocketd: "+config.NoEffectWarning, "file", confFile, "keys", none)
				}
				bc = c
			}
			if cmd.Flags().Changed("listen-addr") {
				bc.BindAddress = listenAddr
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runBroker(ctx, broker.Config{Broker: bc, ConfigFile: confPath, Logger: log}, log)
		},
	}
	cmd.Flags().StringVarP(&confPath, "config", "c", "", "broker.conf properties file")
	cmd.Flags().StringVar(&listenAddr, "listen-addr", "", "IP the remoting and HA ports listen on; overrides bindAddress (default: all interfaces)")
	return cmd
}

// fileExists reports whether path names an existing file.
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
