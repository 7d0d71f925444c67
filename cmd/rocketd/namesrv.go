package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/controller"
	"github.com/rocketd/rocketd/internal/namesrv"
)

// shutdownGrace bounds how long requests in flight may take to finish after
// SIGINT/SIGTERM.
const shutdownGrace = 10 * time.Second

func newNamesrvCommand(root *rootOptions) *cobra.Command {
	var (
		confPath   string
		port       int
		listenAddr string
		kvConfig   string
	)
	cmd := &cobra.Command{
		Use:   "namesrv",
		Short: "Run the NameServer alone",
		Long: `Run the NameServer alone until SIGINT or SIGTERM.

Settings come from the namesrv.conf given with -c (Java properties, RocketMQ's
keys: listenPort, bindAddress, kvConfigPath, orderMessageEnable, and the tls.*
keys as for the broker: tls.server.mode, tls.server.certPath, ...), then from
flags. UPDATE_NAMESRV_CONFIG (mqadmin updateNamesrvConfig) writes the keys it
changes into the -c file, or without -c into configStorePath
($HOME/namesrv/namesrv.properties), which the next start without -c reads.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := root.logger()
			if err != nil {
				return err
			}
			var cfg config.NamesrvConfig
			var ctl *config.ControllerConfig // enableControllerInNamesrv
			confFile := confPath
			if confFile == "" {
				// Without -c, UPDATE_NAMESRV_CONFIG persists to
				// configStorePath: read it back.
				var def config.NamesrvConfig
				def.EnsureDefaults()
				if fileExists(def.ConfigStorePath) {
					confFile = def.ConfigStorePath
					log.Info("rocketd: reading the keys updated at run time", "file", confFile)
				}
			}
			if confFile != "" {
				c, unknown, err := config.LoadNamesrvFile(confFile)
				if err != nil {
					return err
				}
				if c.EnableControllerInNamesrv {
					cc, rest, noEffect, err := config.LoadControllerInNamesrv(confFile, unknown)
					if err != nil {
						return err
					}
					unknown, ctl = rest, &cc
					if len(noEffect) > 0 {
						log.Warn("rocketd: "+config.NoEffectWarning, "file", confFile, "keys", noEffect)
					}
				}
				if len(unknown) > 0 {
					log.Warn("rocketd: unknown keys in config file ignored", "file", confFile, "keys", unknown)
				}
				cfg = c
				// Java's NamesrvStartup persists updates to the -c file.
				cfg.ConfigStorePath = confFile
			}
			if cmd.Flags().Changed("port") || confPath == "" {
				cfg.ListenPort = port
			}
			if kvConfig != "" {
				cfg.KVConfigPath = kvConfig
			}
			addr, err := applyListenAddr(&cfg, listenAddr)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runNamesrv(ctx, namesrv.Config{Namesrv: cfg, Addr: addr, Logger: log}, ctl, log)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&confPath, "config", "c", "", "namesrv.conf properties file")
	f.IntVar(&port, "port", config.DefaultNamesrvPort, "TCP port to listen on")
	f.StringVar(&listenAddr, "listen-addr", "", "IP to bind (all interfaces when empty), or a full host:port that overrides --port")
	f.StringVar(&kvConfig, "kv-config", "", "KV config file (default $HOME/namesrv/kvConfig.json)")
	return cmd
}

// applyListenAddr interprets --listen-addr: a bare IP (or host) sets the bind
// address; host:port is returned as the full listen address.
func applyListenAddr(cfg *config.NamesrvConfig, listenAddr string) (string, error) {
	if listenAddr == "" {
		return "", nil
	}
	if host, portStr, err := net.SplitHostPort(listenAddr); err == nil {
		p, err := strconv.Atoi(portStr)
		if err != nil || p < 0 || p > 65535 {
			return "", fmt.Errorf("--listen-addr %q: bad port", listenAddr)
		}
		cfg.BindAddress, cfg.ListenPort = host, p
		return listenAddr, nil
	}
	cfg.BindAddress = listenAddr
	return "", nil
}

// runNamesrv starts a NameServer (with the controller on its port when
// ctl is set) and serves until ctx is cancelled, then shuts them down
// gracefully, the controller first.
func runNamesrv(ctx context.Context, cfg namesrv.Config, ctl *config.ControllerConfig, log *slog.Logger) error {
	srv, err := namesrv.New(cfg)
	if err != nil {
		return err
	}
	var c *controller.Controller
	if ctl != nil {
		if c, err = controller.New(controller.Config{Controller: *ctl, Remoting: srv.Remoting(), Logger: log}); err != nil {
			return err
		}
	}
	if err := srv.Start(); err != nil {
		return err
	}
	log.Info("rocketd: NameServer ready", "addr", srv.Addr())
	if c != nil {
		if err := c.Start(); err != nil {
			return errors.Join(err, srv.Close())
		}
		log.Info("rocketd: controller ready in the NameServer", "id", c.ID(), "addr", c.ClientAddr())
	}
	<-ctx.Done()
	log.Info("rocketd: shutting down", "grace", shutdownGrace)
	if c != nil {
		if err := c.Close(); err != nil {
			log.Warn("rocketd: controller shutdown", "err", err)
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("namesrv shutdown: %w", err)
	}
	log.Info("rocketd: stopped")
	return nil
}
