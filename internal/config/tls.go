package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// TLS defaults: Java's TlsSystemConfig.
const (
	DefaultTLSServerMode           = "permissive"
	DefaultTLSTestModeEnable       = true
	DefaultTLSServerNeedClientAuth = "none"
	// DefaultTLSConfigFile is read, when it exists, if tls.config.file is
	// not set (Java reads it the same way).
	DefaultTLSConfigFile = "/etc/rocketmq/tls.properties"
)

// TLSConfig holds RocketMQ's tls.* settings (remoting TlsSystemConfig).
// Java reads them as JVM system properties and from tls.config.file;
// rocketd reads them from broker.conf / namesrv.conf and then from
// tls.config.file, whose values win, as in Java. tls.server.mode,
// tls.enable and useTLS are read from broker.conf / namesrv.conf only
// (Java never reads them from the file either).
//
// The zero value means Java's defaults: mode permissive, test mode on (a
// self-signed certificate generated at start; clients trust any server),
// no client certificates.
type TLSConfig struct {
	// ServerMode is disabled, permissive or enforcing (permissive).
	ServerMode string `prop:"tls.server.mode"`
	// Enable makes outgoing connections (to NameServers, the HA master)
	// use TLS: "true"/"false"; empty means true when ServerMode is
	// enforcing (NettyClientConfig.useTLS). UseTLS is the broker.conf
	// spelling Java reads into NettyClientConfig; it wins when set.
	Enable string `prop:"tls.enable"`
	UseTLS string `prop:"useTLS"`
	// TestModeEnable: "true" (the default when empty) serves a
	// self-signed certificate, verifies client certificates only against
	// the system roots, and makes clients trust any server.
	TestModeEnable string `prop:"tls.test.mode.enable"`
	// ConfigFile is a properties file with the keys below (default
	// DefaultTLSConfigFile, skipped when absent).
	ConfigFile string `prop:"tls.config.file"`

	ServerNeedClientAuth string `prop:"tls.server.need.client.auth"` // none, optional, require
	ServerKeyPath        string `prop:"tls.server.keyPath"`          // PEM: PKCS#8 (maybe encrypted, see pkcs8.go), PKCS#1 or SEC1
	ServerKeyPassword    string `prop:"tls.server.keyPassword" secret:"true"`
	ServerCertPath       string `prop:"tls.server.certPath"` // PEM chain
	// ServerAuthClient verifies client certificates against
	// ServerTrustCertPath (else the system roots); false accepts any.
	ServerAuthClient    bool   `prop:"tls.server.authClient"`
	ServerTrustCertPath string `prop:"tls.server.trustCertPath"`

	ClientKeyPath       string `prop:"tls.client.keyPath"`
	ClientKeyPassword   string `prop:"tls.client.keyPassword" secret:"true"`
	ClientCertPath      string `prop:"tls.client.certPath"`
	ClientAuthServer    bool   `prop:"tls.client.authServer"`
	ClientTrustCertPath string `prop:"tls.client.trustCertPath"`
}

// isTLSKey reports a key TLSConfig binds.
func isTLSKey(k string) bool { return strings.HasPrefix(k, "tls.") || k == "useTLS" }

// bindTLS binds the tls.* keys of props onto t and then reads the
// tls.config.file; the other keys are returned for the caller's own
// struct. Unknown tls.* keys are returned in unknown.
func bindTLS(props Properties, t *TLSConfig) (rest Properties, unknown []string, err error) {
	rest, own := Properties{}, Properties{}
	for k, v := range props {
		if isTLSKey(k) {
			own[k] = strings.TrimSpace(v)
		} else {
			rest[k] = v
		}
	}
	if unknown, err = Bind(own, t); err != nil {
		return rest, unknown, err
	}
	more, err := t.readFile()
	unknown = append(unknown, more...)
	slices.Sort(unknown)
	return rest, unknown, err
}

// readFile applies tls.config.file (see TLSConfig). Keys the file may not
// set are returned as unknown, prefixed with the file name.
func (t *TLSConfig) readFile() ([]string, error) {
	path := t.ConfigFile
	if path == "" {
		path = DefaultTLSConfigFile
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
	}
	props, err := LoadPropertiesFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: tls.config.file: %w", err)
	}
	var unknown []string
	own := Properties{}
	for k, v := range props {
		switch k {
		case "tls.server.mode", "tls.enable", "useTLS", "tls.config.file":
			unknown = append(unknown, path+": "+k)
		default:
			own[k] = strings.TrimSpace(v)
		}
	}
	more, err := Bind(own, t)
	for _, k := range more {
		unknown = append(unknown, path+": "+k)
	}
	if err != nil {
		return unknown, fmt.Errorf("%s: %w", path, err)
	}
	return unknown, nil
}

// Mode is ServerMode or its default.
func (t *TLSConfig) Mode() string {
	if t.ServerMode == "" {
		return DefaultTLSServerMode
	}
	return t.ServerMode
}

func (t *TLSConfig) testMode() bool {
	b, err := parseOptBool(t.TestModeEnable, DefaultTLSTestModeEnable)
	return err == nil && b
}

// ClientEnabled reports whether outgoing connections use TLS.
func (t *TLSConfig) ClientEnabled() bool {
	for _, v := range []string{t.UseTLS, t.Enable} {
		if v != "" {
			b, err := parseOptBool(v, false)
			return err == nil && b
		}
	}
	return t.Mode() == "enforcing"
}

func parseOptBool(s string, def bool) (bool, error) {
	if s == "" {
		return def, nil
	}
	return strconv.ParseBool(s)
}

// Validate reports every TLS setting that cannot work, without reading
// the certificate files (ServerTLS / ClientTLS do).
func (t *TLSConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("config: "+format, args...)) }
	switch t.Mode() {
	case "disabled", "permissive", "enforcing":
	default:
		// Java falls back to permissive; a misspelt "enforcing" must not
		// leave plaintext open.
		bad("tls.server.mode=%q: want disabled, permissive or enforcing", t.ServerMode)
	}
	for _, kv := range [][2]string{{"tls.enable", t.Enable}, {"useTLS", t.UseTLS}, {"tls.test.mode.enable", t.TestModeEnable}} {
		if _, err := parseOptBool(kv[1], false); err != nil {
			bad("%s=%q: want true or false", kv[0], kv[1])
		}
	}
	if _, err := t.clientAuth(); err != nil {
		errs = append(errs, err)
	}
	if t.testMode() {
		// Java ignores these files in test mode, silently serving a
		// self-signed certificate instead of the one configured.
		for _, kv := range [][2]string{{"tls.server.certPath", t.ServerCertPath}, {"tls.server.keyPath", t.ServerKeyPath},
			{"tls.client.certPath", t.ClientCertPath}, {"tls.client.keyPath", t.ClientKeyPath}} {
			if kv[1] != "" {
				bad("%s is set but tls.test.mode.enable is true (its default), which ignores it: set tls.test.mode.enable=false", kv[0])
			}
		}
	} else if t.Mode() != "disabled" && (t.ServerCertPath == "" || t.ServerKeyPath == "") {
		bad("tls.server.mode=%s with tls.test.mode.enable=false needs tls.server.certPath and tls.server.keyPath", t.Mode())
	}
	if (t.ClientCertPath == "") != (t.ClientKeyPath == "") {
		bad("tls.client.certPath and tls.client.keyPath go together")
	}
	return errors.Join(errs...)
}

// clientAuth maps tls.server.need.client.auth and tls.server.authClient
// to Go's policy: "none" asks for no certificate; "optional" and
// "require" ask for one, verified only with authClient (Java trusts any
// certificate otherwise).
func (t *TLSConfig) clientAuth() (tls.ClientAuthType, error) {
	mode := strings.ToLower(strings.TrimSpace(t.ServerNeedClientAuth))
	if mode == "" {
		mode = DefaultTLSServerNeedClientAuth
	}
	if mode != "none" && mode != "optional" && mode != "require" {
		return 0, fmt.Errorf("config: tls.server.need.client.auth=%q: want none, optional or require", t.ServerNeedClientAuth)
	}
	switch {
	case t.testMode():
		return tls.VerifyClientCertIfGiven, nil // Java: ClientAuth.OPTIONAL, default trust
	case mode == "none":
		return tls.NoClientCert, nil
	case mode == "optional" && t.ServerAuthClient:
		return tls.VerifyClientCertIfGiven, nil
	case mode == "optional":
		return tls.RequestClientCert, nil
	case t.ServerAuthClient:
		return tls.RequireAndVerifyClientCert, nil
	}
	return tls.RequireAnyClientCert, nil
}

// ServerTLS builds the listeners' TLS configuration: nil when the mode is
// disabled. Files that cannot be read or parsed are errors naming the key.
func (t *TLSConfig) ServerTLS() (*tls.Config, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if t.Mode() == "disabled" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	var err error
	if t.testMode() {
		cert, err := selfSigned()
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	} else {
		cert, err := loadKeyPair("tls.server", t.ServerCertPath, t.ServerKeyPath, t.ServerKeyPassword)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if cfg.ClientAuth, err = t.clientAuth(); err != nil {
		return nil, err
	}
	if t.ServerAuthClient && t.ServerTrustCertPath != "" && !t.testMode() {
		if cfg.ClientCAs, err = loadPool("tls.server.trustCertPath", t.ServerTrustCertPath); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// ClientTLS builds the configuration of outgoing connections: nil when
// ClientEnabled is false. Like Java, a client that verifies the server
// (tls.client.authServer) checks the certificate chain against
// tls.client.trustCertPath (else the system roots) but not the host name:
// brokers are dialled by the IP they registered.
func (t *TLSConfig) ClientTLS() (*tls.Config, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if !t.ClientEnabled() {
		return nil, nil
	}
	return ClientTLSConfig(ClientTLSOptions{
		Verify: t.ClientAuthServer && !t.testMode(), TrustCertPath: t.ClientTrustCertPath,
		CertPath: t.ClientCertPath, KeyPath: t.ClientKeyPath, KeyPassword: t.ClientKeyPassword,
	})
}

// ClientTLSOptions are the inputs of ClientTLSConfig (rocketctl's flags
// and the tls.client.* keys).
type ClientTLSOptions struct {
	Verify        bool   // check the server's chain (not its name)
	TrustCertPath string // CAs to check it against (empty: system roots)
	ServerName    string // when set, the server's name is checked too
	CertPath      string // client certificate chain, PEM
	KeyPath       string // its key
	KeyPassword   string
}

// ClientTLSConfig builds a client's TLS configuration from o.
func ClientTLSConfig(o ClientTLSOptions) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CertPath != "" || o.KeyPath != "" {
		cert, err := loadKeyPair("tls.client", o.CertPath, o.KeyPath, o.KeyPassword)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	var roots *x509.CertPool
	if o.TrustCertPath != "" {
		var err error
		if roots, err = loadPool("tls.client.trustCertPath", o.TrustCertPath); err != nil {
			return nil, err
		}
	}
	switch {
	case o.Verify && o.ServerName != "":
		cfg.RootCAs, cfg.ServerName = roots, o.ServerName
	case o.Verify:
		cfg.InsecureSkipVerify = true // the chain is checked below
		cfg.VerifyConnection = func(cs tls.ConnectionState) error { return verifyChain(cs, roots) }
	default:
		cfg.InsecureSkipVerify = true
	}
	return cfg, nil
}

// verifyChain checks the server's certificate chain, not its name.
func verifyChain(cs tls.ConnectionState, roots *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("tls: the server sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
		Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	return err
}

// loadKeyPair reads a PEM certificate chain and its private key; prefix
// names the keys in errors.
func loadKeyPair(prefix, certPath, keyPath, password string) (tls.Certificate, error) {
	if certPath == "" || keyPath == "" {
		return tls.Certificate{}, fmt.Errorf("config: %s.certPath and %s.keyPath go together", prefix, prefix)
	}
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("config: %s.certPath: %w", prefix, err)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("config: %s.keyPath: %w", prefix, err)
	}
	plainKey, err := plainKeyPEM(keyPEM, password)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("config: %s.keyPath %s: %w", prefix, keyPath, err)
	}
	cert, err := tls.X509KeyPair(certPEM, plainKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("config: %s.certPath %s with %s.keyPath %s: %w", prefix, certPath, prefix, keyPath, err)
	}
	return cert, nil
}

// plainKeyPEM returns the PEM form tls.X509KeyPair takes of the first
// private key in keyPEM, decrypted with password when it is an encrypted
// PKCS#8 key. A password for a key that is not encrypted is an error, as
// in Java.
func plainKeyPEM(keyPEM []byte, password string) ([]byte, error) {
	for rest := keyPEM; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, errors.New("no PEM private key found")
		}
		switch {
		case b.Type == "ENCRYPTED PRIVATE KEY":
			if password == "" {
				return nil, errors.New("the key is encrypted: set its keyPassword")
			}
			der, err := decryptPKCS8(b.Bytes, password)
			if err != nil {
				return nil, err
			}
			return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
		case strings.HasSuffix(b.Type, "PRIVATE KEY"):
			if _, enc := b.Headers["Proc-Type"]; enc {
				return nil, errors.New("legacy encrypted PEM key (Proc-Type header) not supported: convert it with openssl pkcs8 -topk8 -v2 aes-256-cbc")
			}
			if password != "" {
				return nil, errors.New("a keyPassword is set but the key is not encrypted")
			}
			return pem.EncodeToMemory(b), nil
		}
	}
}

// loadPool reads PEM certificates into a pool.
func loadPool(key, path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", key, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("config: %s %s: no PEM certificate in it", key, path)
	}
	return pool, nil
}

// selfSigned makes the certificate of test mode (Netty's
// SelfSignedCertificate): a fresh key each start, valid a year.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("config: TLS test mode: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("config: TLS test mode: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "rocketd self-signed (tls.test.mode.enable)"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("config: TLS test mode: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
