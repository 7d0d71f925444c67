package broker

import (
	"context"
	"errors"
	"fmt"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/console"
	"github.com/rocketd/rocketd/internal/remoting"
)

// startConsole starts the web console when consoleEnable is set. It is an
// admin client of the whole cluster, so it reads the NameServers the broker
// registers with; it serves HTTPS when tls.server.mode is enforcing (a
// permissive HTTP port cannot tell the two apart), plain HTTP otherwise.
func (b *Broker) startConsole() error {
	bc := &b.cfg
	if !bc.ConsoleEnable {
		return nil
	}
	if len(bc.NamesrvAddrs()) == 0 {
		return errors.New("broker: consoleEnable needs namesrvAddr: the console reads the cluster from the NameServers")
	}
	cfg := console.Config{ListenAddr: bc.ConsoleListenAddr, Namesrv: bc.NamesrvAddrs(), ClientTLS: b.tlsClient, Logger: b.log}
	if bc.TLS.Mode() == "enforcing" {
		st, err := bc.TLS.ServerTLS()
		if err != nil {
			return fmt.Errorf("broker: console TLS: %w", err)
		}
		cfg.TLS = st
	}
	ak, sk, signed, err := bc.ConsoleCredentials()
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	if signed {
		cred := auth.Credentials{AccessKey: ak, SecretKey: sk}
		cfg.Sign = func(c *remoting.Command) { cred.Sign(c) }
	}
	srv, err := console.Start(cfg)
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	b.console = srv
	return nil
}

// closeConsole stops the console (nil-safe).
func (b *Broker) closeConsole(ctx context.Context) error {
	if b.console == nil {
		return nil
	}
	return b.console.Close(ctx)
}

// ConsoleAddr is the web console's bound address; "" when it is off.
func (b *Broker) ConsoleAddr() string {
	if b.console == nil {
		return ""
	}
	return b.console.Addr()
}
