package main

import (
	"crypto/tls"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/remoting"
)

// tlsFlags are the TLS options of every call, RocketMQ's tls.enable and
// tls.client.* keys as flags. The key password is read from a file, never
// taken on the command line (where ps shows it) nor shown by --help.
type tlsFlags struct {
	enable       bool
	verify       bool
	caPath       string
	serverName   string
	certPath     string
	keyPath      string
	passwordFile string
}

func (f *tlsFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.enable, "tls", false, "connect with TLS (tls.enable); implied by the other --tls-* flags")
	fs.BoolVar(&f.verify, "tls-verify", false, "verify the server's certificate chain (tls.client.authServer); implied by --tls-ca")
	fs.StringVar(&f.caPath, "tls-ca", "", "PEM file of the CAs to verify servers with (tls.client.trustCertPath; default: system roots)")
	fs.StringVar(&f.serverName, "tls-server-name", "", "also check that the server's certificate names this host (RocketMQ checks the chain only)")
	fs.StringVar(&f.certPath, "tls-cert", "", "client certificate chain, PEM (tls.client.certPath)")
	fs.StringVar(&f.keyPath, "tls-key", "", "client private key, PEM (tls.client.keyPath)")
	fs.StringVar(&f.passwordFile, "tls-key-password-file", "", "file holding the password of an encrypted --tls-key (tls.client.keyPassword)")
}

// config builds the TLS configuration the flags ask for; nil: plaintext.
func (f *tlsFlags) config() (*tls.Config, error) {
	verify := f.verify || f.caPath != "" || f.serverName != ""
	if !f.enable && !verify && f.certPath == "" && f.keyPath == "" && f.passwordFile == "" {
		return nil, nil
	}
	if (f.certPath == "") != (f.keyPath == "") {
		return nil, fmt.Errorf("--tls-cert and --tls-key go together")
	}
	var password string
	if f.passwordFile != "" {
		b, err := os.ReadFile(f.passwordFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-key-password-file: %w", err)
		}
		password = strings.TrimRight(string(b), "\r\n")
	}
	return config.ClientTLSConfig(config.ClientTLSOptions{Verify: verify, TrustCertPath: f.caPath, ServerName: f.serverName,
		CertPath: f.certPath, KeyPath: f.keyPath, KeyPassword: password})
}

// clientConfig is the configuration of every remoting client rocketctl
// makes: the call timeout and the TLS flags, then tune.
func (c *ctl) clientConfig(tune ...func(*remoting.ClientConfig)) remoting.ClientConfig {
	cc := remoting.ClientConfig{DialTimeout: c.timeout, TLS: c.tlsConfig, BeforeRequest: c.sign}
	for _, f := range tune {
		f(&cc)
	}
	return cc
}
