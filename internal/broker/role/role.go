package role

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
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
	// Services, when set, are the services a master runs beside
	// replication (POP revive, delay and timer delivery, transaction
	// check-back): a role change starts or stops them (change.go).
	Services MasterServices
}

// MasterServices are the broker's services that write to the store on
// their own and so run on a master only. The broker's wiring implements
// it; Role calls it under its lock, never concurrently.
type MasterServices interface {
	// StartMaster starts them on a promoted broker, once its store takes
	// puts, from the progress the slave copied from its old master.
	StartMaster() error
	// StopMaster stops them on a demoted broker, before its store
	// refuses puts, and persists their progress.
	StopMaster() error
}

// Invoker sends one request and waits for its answer (*remoting.Client).
type Invoker interface {
	Invoke(ctx context.Context, addr string, req *remoting.Command) (*remoting.Command, error)
}

// Store is what the role needs of the message store: the HA server
// reads it, the HA client appends to it, and a role change switches it
// between refusing and taking puts (store.Store).
type Store interface {
	ha.Source
	ha.Sink
	BecomeMaster(ctx context.Context) error
	BecomeSlave()
	// Epochs is the epoch file a master appends the epoch it takes to.
	Epochs() *store.Epochs
}

// Role is the one owner of what the broker is now in its broker group
// (rocketmq-spec.md §12): on a master the HA server (every master runs
// it; only a SYNC_MASTER makes puts wait for it), on a slave the HA client
// and the periodic metadata copy, and on both the NameServer registration
// with the current brokerId. BecomeMaster and BecomeSlave change it at
// runtime.
type Role struct {
	cfg Config
	bc  *config.BrokerConfig
	log *slog.Logger

	store  Store
	tables Tables
	reg    *registrar

	// mu serializes Start, the role changes and Close; cur is replaced
	// (never changed in place) under it and read without it.
	mu      sync.Mutex
	cur     atomic.Pointer[state]
	started bool
	closed  bool

	// masterHA and masterAddr are the master's HA and main addresses as
	// BecomeSlave assigned them or the NameServer's registration answer
	// last named them.
	masterHA   atomic.Pointer[string]
	masterAddr atomic.Pointer[string]
	// assigned: BecomeSlave named the master; haMasterAddress and the
	// registration answers no longer do.
	assigned atomic.Bool

	// ctl is controller mode (enableControllerMode; nil otherwise).
	ctl *controllerMode
	// inSync, when set, is a controller-mode master's minInSyncReplicas
	// policy (variant.go).
	inSync atomic.Pointer[inSyncPolicy]
}

// state is one role: a master's (server) or a slave's (client, meta).
type state struct {
	role     config.BrokerRole
	brokerID int64
	epoch    int32 // the master epoch taken or followed; 0: none (no controller)
	server   *ha.Server
	client   *ha.Client
	meta     *slaveSync
	// undecided: controller mode before the controller named a role: the
	// store refuses puts, nothing replicates, the broker does not register.
	undecided bool
}

func (st *state) master() bool { return st.role != config.Slave }

// New prepares the role of broker.conf before the store opens: a master's
// store waits on the current HA server (Replica: whichever server the
// role runs then), a slave's store refuses puts.
func New(cfg Config, scfg *store.Config) *Role {
	bc := cfg.Broker
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Role{cfg: cfg, bc: bc, log: cfg.Logger}
	r.reg = newRegistrar(r, bc.NamesrvAddrs())
	scfg.Replica = replica{r}
	st := &state{role: bc.BrokerRole, brokerID: bc.BrokerID}
	if bc.EnableControllerMode {
		ctl, err := newControllerMode(r)
		if err != nil {
			// Validate refuses an empty controllerAddr; nothing else fails.
			r.log.Error("broker: controller mode", "err", err)
		}
		r.ctl = ctl
		// The controller names the role: until then a store that refuses
		// puts, no replication, no registration.
		scfg.Slave = true
		r.cur.Store(&state{role: config.Slave, undecided: true})
		return r
	}
	if st.master() {
		st.server = r.newServer(bc.BrokerRole)
	} else {
		scfg.Slave = true
		st.client = r.newClient(bc.BrokerID, 0)
		st.meta = newSlaveSync(r, r.masterMainAddr, cfg.SlaveSyncInterval, cfg.SlaveFullSyncInterval)
	}
	r.cur.Store(st)
	return r
}

func (r *Role) newServer(role config.BrokerRole) *ha.Server {
	bc := r.bc
	cfg := ha.ServerConfig{
		Addr:                 r.cfg.HAListenAddr,
		SegmentSize:          r.cfg.SegmentSize,
		Sync:                 role == config.SyncMaster,
		TransferBatchSize:    bc.HATransferBatchSize,
		HeartbeatInterval:    bc.HASendHeartbeatInterval,
		HousekeepingInterval: bc.HAHousekeepingInterval,
		MaxGap:               bc.HASlaveFallbehindMax,
		WaitTimeout:          bc.SyncFlushTimeout,
		Authenticator:        r.cfg.Authenticator,
		Logger:               r.log,
		TLS:                  r.cfg.TLSListener,
	}
	if r.ctl == nil {
		return ha.NewServer(cfg)
	}
	r.ctl.autoSwitchServer(&cfg, role)
	s := ha.NewServer(cfg)
	// The SyncStateSet the controller named with the promotion, before
	// any put can wait on the server.
	if set := r.ctl.startSet.Load(); set != nil {
		s.SetSyncStateSet(*set)
	}
	return s
}

// newClient is a slave's HA client; in controller mode an AutoSwitch one
// handshaking as brokerID and following epoch.
func (r *Role) newClient(brokerID int64, epoch int32) *ha.Client {
	bc := r.bc
	cfg := ha.ClientConfig{
		MasterAddr:           r.masterHAAddr,
		HeartbeatInterval:    bc.HASendHeartbeatInterval,
		HousekeepingInterval: bc.HAHousekeepingInterval,
		Credentials:          r.cfg.Credentials,
		Logger:               r.log,
		TLS:                  r.cfg.TLSClient,
	}
	if r.ctl != nil {
		r.ctl.autoSwitchClient(&cfg, brokerID, epoch)
	}
	return ha.NewClient(cfg)
}

// replica is the store's Replica: puts of a SYNC_MASTER wait on the HA
// server the role runs now.
type replica struct{ r *Role }

// Wait waits on the current HA server. Without one (a slave) no put gets
// here: BecomeSlave drains the puts before it stops the server; a put
// that did would be stored but not replicated.
func (w replica) Wait(ctx context.Context, end int64) store.PutStatus {
	if s := w.r.cur.Load().server; s != nil {
		return s.Wait(ctx, end)
	}
	return store.FlushSlaveTimeout
}

// Admit refuses a put that waits before it is written while a
// controller-mode master's SyncStateSet is smaller than minInSyncReplicas
// (store.ReplicaAdmitter).
func (w replica) Admit() store.PutStatus {
	if p := w.r.inSync.Load(); p != nil {
		return p.admit()
	}
	return store.PutOK
}

// confirmOffset is what the broker reports to the controller as its
// confirm offset: on a master the HA server's (Java's
// computeConfirmOffset: the smallest ack of the SyncStateSet's slaves),
// on a slave the one its master last sent (its end until one came).
func (r *Role) confirmOffset(end int64) int64 {
	cur := r.cur.Load()
	c := int64(-1)
	switch {
	case cur.server != nil:
		c = cur.server.ConfirmOffset()
	case cur.client != nil:
		c = cur.client.ConfirmOffset()
	}
	if c < 0 {
		return end
	}
	return min(c, end)
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
	cur := r.cur.Load()
	if cur.server != nil {
		if err := cur.server.Start(st); err != nil {
			return fmt.Errorf("broker: %w", err)
		}
		return nil
	}
	if cur.client == nil {
		return nil // undecided (controller mode)
	}
	if err := cur.client.Start(st); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	return nil
}

// Start starts a slave's metadata copy and the registration loop on the
// opened tables; a topic change asks for a registration round. The role
// may change from now on.
func (r *Role) Start(t Tables) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tables = t
	t.Topics.OnChange(r.reg.kick)
	if t.Mappings != nil {
		t.Mappings.OnChange(r.reg.kick)
	}
	if m := r.cur.Load().meta; m != nil {
		m.start(r.reg.kick)
	}
	r.reg.start()
	r.started = true
	if r.ctl != nil {
		r.ctl.start()
	}
}

// AwaitRegistration asks for a registration round and returns once a
// round that began after the call has ended (UPDATE_AND_CREATE_TOPIC).
func (r *Role) AwaitRegistration(ctx context.Context) error { return r.reg.awaitRound(ctx) }

// Unregister stops the registration loop and sends UNREGISTER_BROKER to
// every NameServer (shutdown's first step: clients stop routing new work
// here while it is still served).
func (r *Role) Unregister(ctx context.Context) {
	if r.ctl != nil {
		r.ctl.close()
	}
	r.reg.close()
	r.reg.unregisterAll(ctx)
}

// awaitsMaster reports a slave that has not learnt its master's main
// address yet (no NameServer answer named one; haMasterAddress names only
// the HA port): the registrar then registers again soon instead of after
// the 30 s period, since the answer is how a slave finds its master.
func (r *Role) awaitsMaster() bool {
	return !r.cur.Load().master() && r.masterMainAddr() == ""
}

// Close stops the role: the registration loop (if Unregister did not),
// the metadata copy, then the HA client or server (a SYNC_MASTER's waiting
// puts end with FLUSH_SLAVE_TIMEOUT). Role changes fail afterwards.
// Idempotent.
func (r *Role) Close() error {
	if r.ctl != nil {
		r.ctl.close()
	}
	r.reg.close()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	return r.cur.Load().stop()
}

// stop stops a state's services: the metadata copy, then the HA client
// or server.
func (st *state) stop() error {
	if st.meta != nil {
		st.meta.close()
	}
	if st.client != nil {
		return st.client.Close()
	}
	if st.server != nil {
		return st.server.Close()
	}
	return nil
}

// haServerAddr is the HA address advertised to the NameServer:
// brokerIP2 (else brokerIP1) with the HA port actually bound.
func (r *Role) haServerAddr() string {
	if s := r.cur.Load().server; s != nil {
		if a := s.Addr(); a != nil {
			host, _, err := net.SplitHostPort(r.bc.HAServerAddr())
			if err == nil {
				return net.JoinHostPort(host, strconv.Itoa(a.(*net.TCPAddr).Port))
			}
		}
	}
	return r.bc.HAServerAddr()
}

// masterHAAddr is where a slave replicates from: what BecomeSlave named,
// else haMasterAddress when configured, else what the NameServer
// answered.
func (r *Role) masterHAAddr() string {
	if a := r.bc.HAMasterAddress; a != "" && !r.assigned.Load() {
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
	cur := r.cur.Load()
	if cur.master() || r.assigned.Load() {
		return
	}
	var h protocol.RegisterBrokerResponseHeader
	if err := h.Decode(resp.ExtFields); err != nil {
		return
	}
	if cur.undecided {
		return
	}
	if h.MasterAddr != "" && h.MasterAddr != r.masterMainAddr() {
		r.log.Info("broker: master address learnt", "master", h.MasterAddr)
		r.masterAddr.Store(&h.MasterAddr)
		cur.meta.kick()
	}
	if h.HAServerAddr != "" && h.HAServerAddr != r.masterHAAddr() {
		r.log.Info("broker: master HA address learnt", "masterHA", h.HAServerAddr)
		r.masterHA.Store(&h.HAServerAddr)
		cur.client.Kick()
	}
}

// HAServer is the master's HA server (nil on a slave).
func (r *Role) HAServer() *ha.Server { return r.cur.Load().server }

// HAStatus is the slave's replication status (zero on a master).
func (r *Role) HAStatus() ha.Status {
	if c := r.cur.Load().client; c != nil {
		return c.Status()
	}
	return ha.Status{}
}

// BrokerRole is the role now: brokerRole of broker.conf until a role
// change.
func (r *Role) BrokerRole() config.BrokerRole { return r.cur.Load().role }

// BrokerID is the brokerId registered now (0 on a master).
//
// In controller mode, before the controller named a role (undecided), it
// is the id the controller gave (0 until known), never the master's 0 once
// known: GET_BROKER_EPOCH_CACHE answers it, and a slave takes brokerId 0
// with the promoted epoch as "the master's HA server runs" (Java answers
// the assigned id until changeToMaster sets MASTER_ID too). The
// promotion writes the epoch file before it replaces the state.
func (r *Role) BrokerID() int64 {
	cur := r.cur.Load()
	if cur.undecided && r.ctl != nil {
		return r.ctl.id.Load()
	}
	return cur.brokerID
}

// Epoch is the master epoch the broker took (master) or follows (slave)
// by the last role change; 0 before any.
func (r *Role) Epoch() int32 { return r.cur.Load().epoch }

// defaultSlaveSyncInterval is how often a slave polls a rocketd master's
// metadata; a master that answers in full (Java) is polled every
// slaveSyncFullInterval, Java's own period.
const defaultSlaveSyncInterval = 500 * time.Millisecond
