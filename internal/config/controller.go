package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ControllerConfig is the controller's configuration: Java's
// ControllerConfig keys (controller.conf, or namesrv.conf with
// enableControllerInNamesrv=true) plus the netty listenPort/bindAddress.
// The controllerDLeger* keys keep Java's names but describe the Raft group
// (hashicorp/raft replaces DLedger): controllerDLegerPeers lists each
// node's Raft transport address, clients use listenPort.
type ControllerConfig struct {
	// BindAddress is the IP the controller's remoting port listens on;
	// empty = all interfaces.
	BindAddress string `prop:"bindAddress"`
	// ListenPort is the remoting port brokers and mqadmin use (default
	// 19876, Java's ControllerStartup).
	ListenPort int `prop:"listenPort"`
	// ControllerType must be DLedger (the default): the Raft group of
	// controllerDLeger*; Java's jRaft keys are not offered.
	ControllerType string `prop:"controllerType"`
	// ControllerDLegerGroup names the group (GET_CONTROLLER_METADATA's
	// group).
	ControllerDLegerGroup string `prop:"controllerDLegerGroup"`
	// ControllerDLegerPeers is "n0-host:port;n1-host:port;...": every
	// node's id and Raft transport address.
	ControllerDLegerPeers string `prop:"controllerDLegerPeers"`
	// ControllerDLegerSelfID is this node's id among the peers.
	ControllerDLegerSelfID string `prop:"controllerDLegerSelfId"`
	// ControllerStorePath is the directory of the Raft log, stable store
	// and snapshots (default $HOME/DledgerController).
	ControllerStorePath string `prop:"controllerStorePath"`
	// ScanNotActiveBrokerInterval is the period of the heartbeat expiry
	// scan (default 5 s).
	ScanNotActiveBrokerInterval time.Duration `prop:"scanNotActiveBrokerInterval" unit:"ms"`
	// ScanInactiveMasterInterval is the period of the leader's check for
	// broker sets whose master is gone (default 5 s).
	ScanInactiveMasterInterval time.Duration `prop:"scanInactiveMasterInterval" unit:"ms"`
	// EnableElectUncleanMaster lets an election pick a replica outside the
	// SyncStateSet, which may lack acknowledged messages (default false).
	EnableElectUncleanMaster bool `prop:"enableElectUncleanMaster"`
	// ControllerThreadPoolNums is the number of request workers (default 16).
	ControllerThreadPoolNums int `prop:"controllerThreadPoolNums"`
	// ControllerRequestThreadPoolQueueCapacity bounds the queued requests
	// (default 50000).
	ControllerRequestThreadPoolQueueCapacity int `prop:"controllerRequestThreadPoolQueueCapacity"`
	// ConfigBlackList lists the ';'-separated keys UPDATE_CONTROLLER_CONFIG
	// refuses besides configBlackList, configStorePath and rocketmqHome.
	ConfigBlackList string `prop:"configBlackList"`

	// NotifyBrokerRoleChanged makes the leader tell the live brokers of a
	// set about a new master at once (NOTIFY_BROKER_ROLE_CHANGED) instead
	// of leaving them to find out on their next poll (default true).
	NotifyBrokerRoleChanged bool `prop:"notifyBrokerRoleChanged"`

	// Java keys accepted from existing files that change nothing here.
	RocketmqHome        string `prop:"rocketmqHome" effect:"none"`
	ConfigStorePath     string `prop:"configStorePath" effect:"none"`
	MappedFileSize      int64  `prop:"mappedFileSize" effect:"none"`
	ElectMasterMaxRetry int    `prop:"electMasterMaxRetryCount" effect:"none"`
	IsProcessReadEvent  bool   `prop:"isProcessReadEvent" effect:"none"`
	MetricsExporterType string `prop:"metricsExporterType" effect:"none"`
}

// Controller defaults (Java's ControllerConfig and ControllerStartup).
const (
	DefaultControllerPort                 = 19876
	DefaultControllerType                 = "DLedger"
	DefaultControllerGroup                = "DefaultControllerGroup"
	DefaultControllerScanInterval         = 5 * time.Second
	DefaultControllerThreadPoolNums       = 16
	DefaultControllerRequestQueueCapacity = 50000
	DefaultControllerConfigBlackList      = "configBlackList;configStorePath"
	controllerTypeJRaft                   = "jRaft"
)

// NewControllerConfig returns a ControllerConfig holding the boolean
// defaults (the starting point to bind a file onto); EnsureDefaults fills
// the rest.
func NewControllerConfig() ControllerConfig {
	return ControllerConfig{NotifyBrokerRoleChanged: true}
}

// EnsureDefaults fills every zero non-boolean field with its default.
func (c *ControllerConfig) EnsureDefaults() {
	if c.ListenPort == 0 {
		c.ListenPort = DefaultControllerPort
	}
	if c.ControllerType == "" {
		c.ControllerType = DefaultControllerType
	}
	if c.ControllerDLegerGroup == "" {
		c.ControllerDLegerGroup = DefaultControllerGroup
	}
	if c.ControllerStorePath == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			home = "."
		}
		c.ControllerStorePath = filepath.Join(home, "DledgerController")
	}
	if c.ScanNotActiveBrokerInterval == 0 {
		c.ScanNotActiveBrokerInterval = DefaultControllerScanInterval
	}
	if c.ScanInactiveMasterInterval == 0 {
		c.ScanInactiveMasterInterval = DefaultControllerScanInterval
	}
	if c.ControllerThreadPoolNums == 0 {
		c.ControllerThreadPoolNums = DefaultControllerThreadPoolNums
	}
	if c.ControllerRequestThreadPoolQueueCapacity == 0 {
		c.ControllerRequestThreadPoolQueueCapacity = DefaultControllerRequestQueueCapacity
	}
	if c.ConfigBlackList == "" {
		c.ConfigBlackList = DefaultControllerConfigBlackList
	}
	if c.ConfigStorePath == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			home = "."
		}
		c.ConfigStorePath = filepath.Join(home, "controller", "controller.properties")
	}
}

// ControllerLiveKeys are the controller keys UPDATE_CONTROLLER_CONFIG
// changes while it runs (on the node that gets the request, as in Java).
var ControllerLiveKeys = []LiveKey{
	{"enableElectUncleanMaster", "whether the next election may pick a replica outside the SyncStateSet"},
	{"notifyBrokerRoleChanged", "whether the next election is announced to the brokers"},
}

// javaControllerBlackList are the keys Java's ControllerRequestProcessor
// refuses whatever configBlackList says.
var javaControllerBlackList = []string{"configBlackList", "configStorePath", "rocketmqHome"}

// NewControllerRuntime returns the controller's runtime configuration over
// c, persisting updates to path.
func NewControllerRuntime(c *ControllerConfig, path string) *Runtime[ControllerConfig] {
	return NewRuntime(c, RuntimeOptions[ControllerConfig]{
		Live:      ControllerLiveKeys,
		BlackList: append(slices.Clone(javaControllerBlackList), strings.Split(c.ConfigBlackList, ";")...),
		Known:     propKeys(c),
		NoEffect:  noEffectKeys(c),
		Path:      path,
		Prepare:   func(c *ControllerConfig) error { return c.Validate() },
	})
}

// ControllerPeer is one member of the Raft group.
type ControllerPeer struct {
	ID   string
	Addr string // host:port of its Raft transport
}

// Peers parses controllerDLegerPeers ("n0-host:port;n1-host:port").
func (c *ControllerConfig) Peers() ([]ControllerPeer, error) {
	var out []ControllerPeer
	for _, p := range strings.Split(c.ControllerDLegerPeers, ";") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		id, addr, ok := strings.Cut(p, "-")
		if !ok || id == "" {
			return nil, fmt.Errorf("config: controllerDLegerPeers: %q is not id-host:port", p)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("config: controllerDLegerPeers: %q: %w", p, err)
		}
		if slices.ContainsFunc(out, func(q ControllerPeer) bool { return q.ID == id }) {
			return nil, fmt.Errorf("config: controllerDLegerPeers: id %q twice", id)
		}
		out = append(out, ControllerPeer{ID: id, Addr: addr})
	}
	if len(out) == 0 {
		return nil, errors.New("config: controllerDLegerPeers is empty: want n0-host:port;n1-host:port;...")
	}
	return out, nil
}

// Validate reports every setting that cannot work (after EnsureDefaults).
func (c *ControllerConfig) Validate() error {
	var errs []error
	if c.ListenPort < 0 || c.ListenPort > 65535 {
		errs = append(errs, fmt.Errorf("config: listenPort %d out of range 0..65535", c.ListenPort))
	}
	if err := checkBindAddress(c.BindAddress); err != nil {
		errs = append(errs, err)
	}
	switch c.ControllerType {
	case DefaultControllerType:
	case controllerTypeJRaft:
		errs = append(errs, errors.New("config: controllerType=jRaft is not offered: rocketd's controller is a Raft group configured by controllerDLegerPeers/controllerDLegerSelfId (controllerType=DLedger)"))
	default:
		errs = append(errs, fmt.Errorf("config: controllerType %q: want DLedger", c.ControllerType))
	}
	peers, err := c.Peers()
	if err != nil {
		errs = append(errs, err)
	} else if !slices.ContainsFunc(peers, func(p ControllerPeer) bool { return p.ID == c.ControllerDLegerSelfID }) {
		errs = append(errs, fmt.Errorf("config: controllerDLegerSelfId %q is not among controllerDLegerPeers %q", c.ControllerDLegerSelfID, c.ControllerDLegerPeers))
	}
	if c.ControllerStorePath == "" {
		errs = append(errs, errors.New("config: controllerStorePath is empty"))
	}
	if c.ScanNotActiveBrokerInterval <= 0 {
		errs = append(errs, fmt.Errorf("config: scanNotActiveBrokerInterval %v must be positive", c.ScanNotActiveBrokerInterval))
	}
	if c.ScanInactiveMasterInterval <= 0 {
		errs = append(errs, fmt.Errorf("config: scanInactiveMasterInterval %v must be positive", c.ScanInactiveMasterInterval))
	}
	if c.ControllerThreadPoolNums <= 0 {
		errs = append(errs, fmt.Errorf("config: controllerThreadPoolNums %d must be positive", c.ControllerThreadPoolNums))
	}
	if c.ControllerRequestThreadPoolQueueCapacity <= 0 {
		errs = append(errs, fmt.Errorf("config: controllerRequestThreadPoolQueueCapacity %d must be positive", c.ControllerRequestThreadPoolQueueCapacity))
	}
	return errors.Join(errs...)
}

// BindController binds the controller keys of props onto c (defaults not
// yet filled) and returns the keys it did not know, and the keys it knows
// that change nothing here.
func BindController(props Properties, c *ControllerConfig) (unknown, noEffect []string, err error) {
	unknown, err = Bind(props, c)
	if err != nil {
		return unknown, nil, err
	}
	none := map[string]bool{}
	for k := range noEffectKeys(c) {
		none[strings.ToLower(k)] = true
	}
	for k := range props {
		if none[strings.ToLower(k)] {
			noEffect = append(noEffect, k)
		}
	}
	slices.Sort(noEffect)
	return unknown, noEffect, nil
}

// LoadControllerFile reads a controller.conf properties file (defaults
// filled in) and returns the keys it did not know and those without effect.
func LoadControllerFile(path string) (c ControllerConfig, unknown, noEffect []string, err error) {
	c = NewControllerConfig()
	props, err := LoadPropertiesFile(path)
	if err != nil {
		return c, nil, nil, err
	}
	unknown, noEffect, err = BindController(props, &c)
	if err != nil {
		return c, unknown, noEffect, fmt.Errorf("%s: %w", path, err)
	}
	c.EnsureDefaults()
	return c, unknown, noEffect, nil
}

// LoadControllerInNamesrv binds the controller keys of a namesrv.conf with
// enableControllerInNamesrv=true (Java's NamesrvStartup reads both configs
// from the one file). nsUnknown are the keys the NameServer did not know;
// unknown are those neither knows.
func LoadControllerInNamesrv(path string, nsUnknown []string) (c ControllerConfig, unknown, noEffect []string, err error) {
	c = NewControllerConfig()
	props, err := LoadPropertiesFile(path)
	if err != nil {
		return c, nil, nil, err
	}
	ctlUnknown, noEffect, err := BindController(props, &c)
	if err != nil {
		return c, nil, noEffect, fmt.Errorf("%s: %w", path, err)
	}
	for _, k := range nsUnknown {
		if slices.Contains(ctlUnknown, k) {
			unknown = append(unknown, k)
		}
	}
	c.EnsureDefaults()
	return c, unknown, noEffect, nil
}
