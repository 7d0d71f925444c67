package main

import (
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/namesrv"
)

func newServeCommand(root *rootOptions) *cobra.Command {
	var (
		dataDir     string
		namesrvPort int
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run NameServer and broker in one process (the embedded default)",
		Long: `Run the NameServer and one master broker in one process, data under --data,
until SIGINT or SIGTERM. Point any RocketMQ client at 127.0.0.1:9876.

The broker is not built yet: for now only the NameServer runs.`,
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
			if err := os.MkdirAll(abs, 0o755); err != nil {
				return err
			}
			cfg := config.NamesrvConfig{
				ListenPort:   namesrvPort,
				KVConfigPath: filepath.Join(abs, "namesrv", "kvConfig.json"),
			}
			log.Warn("rocketd: the broker is not built yet; serving the NameServer only", "data", abs)
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runNamesrv(ctx, namesrv.Config{Namesrv: cfg, Logger: log}, log)
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data", "./rocketd-data", "data directory (store, configs, namesrv KV config)")
	f.IntVar(&namesrvPort, "namesrv-port", config.DefaultNamesrvPort, "NameServer TCP port")
	return cmd
}
