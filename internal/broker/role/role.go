package role

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/ha"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/vfs"
)

// Config is what the role needs from the broker's wiring. It is fixed for
// the broker's life; what changes at runtime (master or slave, the
// brokerId) is the Role's own state.
type Config struct {
	// Broker is the broker.conf configuration (read only).
	Broker *config.BrokerConfig
	// Addr is the advertised main address (brokerIP1:bound port).
	Addr string
	// HAListenAddr is where a master's HA server listens.
	HAListenAddr string
	// SegmentSize is the CommitLog's segment size (the HA server's
	// transfers never cross a segment end).
	SegmentSize int64
	// SlaveSyncInterval and SlaveFullSyncInterval pace the slave's
	// metadata copy (0: defaults, see newSlaveSync).
	SlaveSyncInterval     time.Duration
	SlaveFullSyncInterval time.Duration
	// NS sends the registration and the slave's metadata requests; the
	// broker owns and closes it.
	NS Invoker
	// Authenticator checks a slave's HA challenge answer (nil: off).
	Authenticator *auth.Authenticator
	// Credentials sign the slave's HA answer (nil: unsigned).
	Credentials *auth.Credentials
	// TLSListener and TLSClient are the broker's tls.* settings.
	TLSListener remoting.TLSListener
	TLSClient   *tls.Config
	// FS holds delayOffset.json.
	FS vfs.FS
	// Logger receives the role's logs.
	Logger *slog.Logger
}

// Invoker sends one request and waits for its answer (*remoting.Client).
type Invoker interface {
	Invoke(ctx context.Context, addr string, req *remoting.Command) (*remoting.Command, error)
}

// Store is what replication needs of the message store: the HA server
// reads it, the HA client appends to it.
type Store interface {
	ha.Source
	ha.Sink
}

// Role is the broker's part in master/slave replication (rocketmq-spec.md
// §12) and its NameServer registration: on a master the HA server (every
// master runs it; only a SYNC_MASTER makes puts wait for it), on a slave
// the HA client and the periodic metadata copy.
type Role struct {
	cfg Config
	bc  *config.BrokerConfig
	log *slog.Logger

	store  Store
	tables Tables

	server *ha.Server // masters
	client *ha.Client // slaves
	meta   *slaveSync // slaves
	reg    *registrar

	// masterHA and masterAddr are the master's HA and main addresses as
	// the NameServer's registration answer last named them.
	masterHA   atomic.Pointer[string]
	masterAddr atomic.Pointer[string]
}

// New prepares the role before the store opens: a master's store waits on
// the HA server (its Replica), a slave's store refuses puts.
func New(cfg Config, scfg *store.Config) *Role {
	bc := cfg.Broker
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Role{cfg: cfg, bc: bc, log: cfg.Logger}
	r.reg = newRegistrar(r, bc.NamesrvAddrs())
	if bc.IsMaster() {
		r.server = ha.NewServer(ha.ServerConfig{
			Addr:                 cfg.HAListenAddr,
			SegmentSize:          cfg.SegmentSize,
			Sync:                 bc.BrokerRole == config.SyncMaster,
			TransferBatchSize:    bc.HATransferBatchSize,
			HeartbeatInterval:    bc.HASendHeartbeatInterval,
			HousekeepingInterval: bc.HAHousekeepingInterval,
			MaxGap:               bc.HASlaveFallbehindMax,
			WaitTimeout:          bc.SyncFlushTimeout,
			Authenticator:        cfg.Authenticator,
			Logger:               cfg.Logger,
			TLS:                  cfg.TLSListener,
		})
		scfg.Replica = r.server
		return r
	}
	scfg.Slave = true
	r.client = ha.NewClient(ha.ClientConfig{
		MasterAddr:           r.masterHAAddr,
		HeartbeatInterval:    bc.HASendHeartbeatInterval,
		HousekeepingInterval: bc.HAHousekeepingInterval,
		Credentials:          cfg.Credentials,
		Logger:               cfg.Logger,
		TLS:                  cfg.TLSClient,
	})
	r.meta = newSlaveSync(r, r.masterMainAddr, cfg.SlaveSyncInterval, cfg.SlaveFullSyncInterval)
	return r
}

// HAListenAddr is override when set, else haListenPort (listenPort+1) on
// the host of listen (else bindAddress); a listen address with port 0
// (tests) gets an ephemeral HA port too.
func HAListenAddr(override, listen string, bc *config.BrokerConfig) string {
	if override != "" {
		return override
	}
	host, port := bc.BindAddress, strconv.Itoa(bc.HAPort())
	if listen != "" {
		if h, p, err := net.SplitHostPort(listen); err == nil {
			host = h
			if p == "0" {
				port = "0"
			} else if n, err := strconv.Atoi(p); err == nil && bc.HAListenPort == 0 {
				port = strconv.Itoa(n + 1)
			}
		}
	}
	return net.JoinHostPort(host, port)
}

// StartHA starts the HA server or client on the opened store. The slave's
// metadata copy and the registration start later (Start), once the tables
// are open.
func (r *Role) StartHA(st Store) error {
	r.store = st
	if r.server != nil {
		if err := r.server.Start(st); err != nil {
			return fmt.Errorf("broker: %w", err)
		}
		return nil
	}
	if err := r.client.Start(st); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	return nil
}

// Start starts a slave's metadata copy and the registration loop on the
// opened tables; a topic change asks for a registration round.
func (r *Role) Start(t Tables) {
	r.tables = t
	t.Topics.OnChange(r.reg.kick)
	if r.meta != nil {
		r.meta.start(r.reg.kick)
	}
	r.reg.start()
}

// AwaitRegistration asks for a registration round and returns once a
// round that began after the call has ended (UPDATE_AND_CREATE_TOPIC).
func (r *Role) AwaitRegistration(ctx context.Context) error { return r.reg.awaitRound(ctx) }

// Unregister stops the registration loop and sends UNREGISTER_BROKER to
// every NameServer (shutdown's first step: clients stop routing new work
// here while it is still served).
func (r *Role) Unregister(ctx context.Context) {
	r.reg.close()
	r.reg.unregisterAll(ctx)
}

// awaitsMaster reports a slave that has not learnt its master's main
// address yet (no NameServer answer named one; haMasterAddress names only
// the HA port): the registrar then registers again soon instead of after
// the 30 s period, since the answer is how a slave finds its master.
func (r *Role) awaitsMaster() bool {
	return r.client != nil && r.masterMainAddr() == ""
}

// Close stops the role: the registration loop (if Unregister did not),
// the metadata copy, then the HA client or server (a SYNC_MASTER's waiting
// puts end with FLUSH_SLAVE_TIMEOUT). Idempotent.
func (r *Role) Close() error {
	r.reg.close()
	if r.meta != nil {
		r.meta.close()
	}
	if r.client != nil {
		return r.client.Close()
	}
	return r.server.Close()
}

// haServerAddr is the HA address advertised to the NameServer:
// brokerIP2 (else brokerIP1) with the HA port actually bound.
func (r *Role) haServerAddr() string {
	if r.server != nil {
		if a := r.server.Addr(); a != nil {
			host, _, err := net.SplitHostPort(r.bc.HAServerAddr())
			if err == nil {
				return net.JoinHostPort(host, strconv.Itoa(a.(*net.TCPAddr).Port))
			}
		}
	}
	return r.bc.HAServerAddr()
}

// masterHAAddr is where a slave replicates from: haMasterAddress when
// configured, else what the NameServer answered.
func (r *Role) masterHAAddr() string {
	if a := r.bc.HAMasterAddress; a != "" {
		return a
	}
	if p := r.masterHA.Load(); p != nil {
		return *p
	}
	return ""
}

func (r *Role) masterMainAddr() string {
	if p := r.masterAddr.Load(); p != nil {
		return *p
	}
	return ""
}

// learn takes the master's addresses from a REGISTER_BROKER answer (filled
// for a slave whose master is registered; §3.6).
func (r *Role) learn(resp *remoting.Command) {
	if r.client == nil {
		return
	}
	var h protocol.RegisterBrokerResponseHeader
	if err := h.Decode(resp.ExtFields); err != nil {
		return
	}
	if h.MasterAddr != "" && h.MasterAddr != r.masterMainAddr() {
		r.log.Info("broker: master address learnt", "master", h.MasterAddr)
		r.masterAddr.Store(&h.MasterAddr)
		r.meta.kick()
	}
	if h.HAServerAddr != "" && h.HAServerAddr != r.masterHAAddr() {
		r.log.Info("broker: master HA address learnt", "masterHA", h.HAServerAddr)
		r.masterHA.Store(&h.HAServerAddr)
		r.client.Kick()
	}
}

// HAServer is the master's HA server (nil on a slave).
func (r *Role) HAServer() *ha.Server { return r.server }

// HAStatus is the slave's replication status (zero on a master).
func (r *Role) HAStatus() ha.Status {
	if r.client == nil {
		return ha.Status{}
	}
	return r.client.Status()
}

// defaultSlaveSyncInterval is how often a slave polls a rocketd master's
// metadata; a master that answers in full (Java) is polled every
// slaveSyncFullInterval, Java's own period.
const defaultSlaveSyncInterval = 500 * time.Millisecond
