package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// NamesrvConfig is the NameServer's configuration. Keys match RocketMQ's
// namesrv.conf (NamesrvConfig + the netty listenPort); the zero value means
// "use the default" for every field (see EnsureDefaults).
type NamesrvConfig struct {
	// BindAddress is the IP the server listens on; empty = all interfaces.
	BindAddress string `prop:"bindAddress"`
	// ListenPort is the TCP port (default 9876).
	ListenPort int `prop:"listenPort"`
	// TLS is the tls.* settings (tls.go).
	TLS TLSConfig `prop:"-"`
	// KVConfigPath is the JSON file holding the KV configuration (default
	// $HOME/namesrv/kvConfig.json).
	KVConfigPath string `prop:"kvConfigPath"`
	// OrderMessageEnable makes route answers carry the topic's
	// ORDER_TOPIC_CONFIG KV value as orderTopicConf (default false).
	OrderMessageEnable bool `prop:"orderMessageEnable"`
	// ScanNotActiveBrokerInterval is the period of the broker expiry scan
	// (default 10 s).
	ScanNotActiveBrokerInterval time.Duration `prop:"scanNotActiveBrokerInterval" unit:"ms"`
	// ScanNotActiveBrokerDelay is the wait before the first scan (default 5 s).
	ScanNotActiveBrokerDelay time.Duration `prop:"scanNotActiveBrokerDelay" unit:"ms"`
	// BrokerChannelExpiredTime is how long a broker may stay silent before it
	// is removed (default 120 s, RocketMQ's BROKER_CHANNEL_EXPIRED_TIME).
	BrokerChannelExpiredTime time.Duration `prop:"brokerChannelExpiredTime" unit:"ms"`
	// ConfigStorePath is where UPDATE_NAMESRV_CONFIG persists changed keys
	// (default $HOME/namesrv/namesrv.properties; the -c file when one is
	// given, as Java's NamesrvStartup sets it).
	ConfigStorePath string `prop:"configStorePath"`
	// ConfigBlackList lists the ';'-separated keys UPDATE_NAMESRV_CONFIG
	// refuses besides Java's fixed configBlackList, configStorePath,
	// kvConfigPath and rocketmqHome.
	ConfigBlackList string `prop:"configBlackList"`
	// EnableControllerInNamesrv runs the fail-over controller inside the
	// NameServer, answering the controller codes on its port; the
	// controller's keys (controller.go) then come from the same file
	// (default false).
	EnableControllerInNamesrv bool `prop:"enableControllerInNamesrv"`
	// Auth holds the authentication keys (auth.go): Java's NameServer has
	// none, rocketd's takes broker.conf's names. Its users file is
	// users.json next to kvConfigPath.
	Auth AuthConfig `prop:"-"`
}

// NameServer defaults (rocketmq-spec.md §14.1).
const (
	DefaultNamesrvPort                 = 9876
	DefaultScanNotActiveBrokerInterval = 10 * time.Second
	DefaultScanNotActiveBrokerDelay    = 5 * time.Second
	DefaultBrokerChannelExpiredTime    = 120 * time.Second
	DefaultNamesrvConfigBlackList      = "configBlackList;configStorePath;kvConfigPath"
)

// DefaultKVConfigPath returns $HOME/namesrv/kvConfig.json (or a path relative
// to the working directory when there is no home directory).
func DefaultKVConfigPath() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		home = "."
	}
	return filepath.Join(home, "namesrv", "kvConfig.json")
}

// UsersPath is the NameServer's users file: users.json next to
// kvConfigPath (after EnsureDefaults).
func (c *NamesrvConfig) UsersPath() string {
	return filepath.Join(filepath.Dir(c.KVConfigPath), "users.json")
}

// EnsureDefaults fills every zero field with its default.
func (c *NamesrvConfig) EnsureDefaults() {
	if c.ListenPort == 0 {
		c.ListenPort = DefaultNamesrvPort
	}
	if c.KVConfigPath == "" {
		c.KVConfigPath = DefaultKVConfigPath()
	}
	if c.ScanNotActiveBrokerInterval == 0 {
		c.ScanNotActiveBrokerInterval = DefaultScanNotActiveBrokerInterval
	}
	if c.ScanNotActiveBrokerDelay == 0 {
		c.ScanNotActiveBrokerDelay = DefaultScanNotActiveBrokerDelay
	}
	if c.BrokerChannelExpiredTime == 0 {
		c.BrokerChannelExpiredTime = DefaultBrokerChannelExpiredTime
	}
	if c.ConfigStorePath == "" {
		c.ConfigStorePath = filepath.Join(filepath.Dir(DefaultKVConfigPath()), "namesrv.properties")
	}
	if c.ConfigBlackList == "" {
		c.ConfigBlackList = DefaultNamesrvConfigBlackList
	}
}

// Validate reports every setting that cannot work (after EnsureDefaults).
func (c *NamesrvConfig) Validate() error {
	var errs []error
	if c.ListenPort < 0 || c.ListenPort > 65535 {
		errs = append(errs, fmt.Errorf("config: listenPort %d out of range 0..65535", c.ListenPort))
	}
	if c.KVConfigPath == "" {
		errs = append(errs, errors.New("config: kvConfigPath is empty"))
	}
	if err := checkBindAddress(c.BindAddress); err != nil {
		errs = append(errs, err)
	}
	if err := c.TLS.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.ScanNotActiveBrokerInterval <= 0 {
		errs = append(errs, fmt.Errorf("config: scanNotActiveBrokerInterval %v must be positive", c.ScanNotActiveBrokerInterval))
	}
	if c.ScanNotActiveBrokerDelay < 0 {
		errs = append(errs, fmt.Errorf("config: scanNotActiveBrokerDelay %v must not be negative", c.ScanNotActiveBrokerDelay))
	}
	if c.BrokerChannelExpiredTime <= 0 {
		errs = append(errs, fmt.Errorf("config: brokerChannelExpiredTime %v must be positive", c.BrokerChannelExpiredTime))
	}
	if err := c.Auth.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// LoadNamesrvFile reads a namesrv.conf properties file into a NamesrvConfig
// (defaults filled in) and returns the keys it did not know.
func LoadNamesrvFile(path string) (NamesrvConfig, []string, error) {
	var c NamesrvConfig
	props, err := LoadPropertiesFile(path)
	if err != nil {
		return c, nil, err
	}
	unknown, err := bindSections(props, &c, &c.TLS, &c.Auth)
	if err != nil {
		return c, unknown, fmt.Errorf("%s: %w", path, err)
	}
	c.EnsureDefaults()
	return c, unknown, nil
}

// checkBindAddress refuses a bindAddress that carries a port or blanks;
// empty means all interfaces.
func checkBindAddress(a string) error {
	if a == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(a); err == nil || strings.ContainsAny(a, " \t") {
		return fmt.Errorf("config: bindAddress %q: want an IP address or host name without a port", a)
	}
	return nil
}
