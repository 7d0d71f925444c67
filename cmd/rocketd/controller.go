package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/controller"
)

func newControllerCommand(root *rootOptions) *cobra.Command {
	var confPath string
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run one node of the fail-over controller group",
		Long: `Run one node of the controller group (RocketMQ 5.x controller mode) until
SIGINT or SIGTERM.

Settings come from the controller.conf given with -c, Java's ControllerConfig
keys: controllerDLegerGroup, controllerDLegerPeers (n0-host:port;n1-host:port;...,
each node's Raft transport address), controllerDLegerSelfId, controllerStorePath,
scanNotActiveBrokerInterval, scanInactiveMasterInterval, enableElectUncleanMaster,
and listenPort/bindAddress: the port brokers (controllerAddr) and mqadmin use.
A namesrv.conf with enableControllerInNamesrv=true runs the controller inside
rocketd namesrv instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := root.logger()
			if err != nil {
				return err
			}
			if confPath == "" {
				return errors.New("controller: -c controller.conf is required (controllerDLegerPeers and controllerDLegerSelfId at least)")
			}
			cfg, unknown, noEffect, err := config.LoadControllerFile(confPath)
			if err != nil {
				return err
			}
			if len(unknown) > 0 {
				log.Warn("rocketd: unknown keys in config file ignored", "file", confPath, "keys", unknown)
			}
			if len(noEffect) > 0 {
				log.Warn("rocketd: "+config.NoEffectWarning, "file", confPath, "keys", noEffect)
			}
			// UPDATE_CONTROLLER_CONFIG persists to the -c file, as Java's
			// ControllerStartup does.
			cfg.ConfigStorePath = confPath
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runController(ctx, controller.Config{Controller: cfg, Logger: log}, log)
		},
	}
	cmd.Flags().StringVarP(&confPath, "config", "c", "", "controller.conf properties file")
	return cmd
}

// runController serves one controller node until ctx is cancelled.
func runController(ctx context.Context, cfg controller.Config, log *slog.Logger) error {
	c, err := controller.New(cfg)
	if err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		return err
	}
	log.Info("rocketd: controller ready", "id", c.ID(), "addr", c.ClientAddr())
	<-ctx.Done()
	log.Info("rocketd: shutting down")
	if err := c.Close(); err != nil {
		return fmt.Errorf("controller shutdown: %w", err)
	}
	log.Info("rocketd: stopped")
	return nil
}
