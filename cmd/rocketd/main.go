// Command rocketd runs the RocketMQ-compatible NameServer and Broker.
//
//	rocketd serve                  NameServer + broker in one process (the embedded default)
//	rocketd namesrv --port 9876    the NameServer alone
//	rocketd broker -c broker.conf  a broker alone
//	rocketd version
//
// Logs go to stderr through log/slog. The process runs until SIGINT or
// SIGTERM, then shuts down gracefully.
package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "rocketd:", err)
		os.Exit(1)
	}
}

// rootOptions are the flags every subcommand shares.
type rootOptions struct {
	logLevel  string
	logFormat string
}

func newRootCommand() *cobra.Command {
	opts := &rootOptions{}
	root := &cobra.Command{
		Use:           "rocketd",
		Short:         "RocketMQ-compatible NameServer and Broker",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&opts.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&opts.logFormat, "log-format", "text", "log format: text or json")
	root.AddCommand(newNamesrvCommand(opts), newServeCommand(opts), newBrokerCommand(opts), newControllerCommand(opts), newVersionCommand())
	return root
}

// logger builds the process logger (stderr) from the shared flags.
func (o *rootOptions) logger() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", o.logLevel, err)
	}
	hopts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(o.logFormat) {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, hopts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, hopts)), nil
	default:
		return nil, fmt.Errorf("--log-format %q: want text or json", o.logFormat)
	}
}
