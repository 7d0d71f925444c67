package broker

import (
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/ha"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// replication is the broker's part in master/slave replication
// (rocketmq-spec.md §12): on a master the HA server (every master runs it;
// only a SYNC_MASTER makes puts wait for it), on a slave the HA client and
// the periodic metadata copy.
type replication struct {
	b *Broker

	server *ha.Server // masters
	client *ha.Client // slaves
	meta   *slaveSync // slaves

	// masterHA and masterAddr are the master's HA and main addresses as
	// the NameServer's registration answer last named them.
	masterHA   atomic.Pointer[string]
	masterAddr atomic.Pointer[string]
}

// newReplication prepares the role before the store opens: a master's
// store waits on the HA server (its Replica), a slave's store refuses puts.
func newReplication(b *Broker, cfg *Config, scfg *store.Config) *replication {
	bc := &b.cfg
	r := &replication{b: b}
	if bc.IsMaster() {
		addr := haListenAddr(cfg, bc)
		r.server = ha.NewServer(ha.ServerConfig{
			Addr:                 addr,
			SegmentSize:          scfg.SegmentSize,
			Sync:                 bc.BrokerRole == config.SyncMaster,
			TransferBatchSize:    bc.HATransferBatchSize,
			HeartbeatInterval:    bc.HASendHeartbeatInterval,
			HousekeepingInterval: bc.HAHousekeepingInterval,
			MaxGap:               bc.HASlaveFallbehindMax,
			WaitTimeout:          bc.SyncFlushTimeout,
			Authenticator:        b.authn,
			Logger:               b.log,
			TLS:                  b.tlsListener,
		})
		scfg.Replica = r.server
		return r
	}
	scfg.Slave = true
	r.client = ha.NewClient(ha.ClientConfig{
		MasterAddr:           r.masterHAAddr,
		HeartbeatInterval:    bc.HASendHeartbeatInterval,
		HousekeepingInterval: bc.HAHousekeepingInterval,
		Credentials:          b.inner,
		Logger:               b.log,
		TLS:                  b.tlsClient,
	})
	r.meta = newSlaveSync(b, scfg.FS, r.masterMainAddr, cfg.SlaveSyncInterval, cfg.SlaveFullSyncInterval)
	return r
}

// haListenAddr is Config.HAListenAddr, else haListenPort (listenPort+1)
// on the host of Config.ListenAddr (else bindAddress); a listen address with port 0 (tests)
// gets an ephemeral HA port too.
func haListenAddr(cfg *Config, bc *config.BrokerConfig) string {
	if cfg.HAListenAddr != "" {
		return cfg.HAListenAddr
	}
	host, port := bc.BindAddress, strconv.Itoa(bc.HAPort())
	if cfg.ListenAddr != "" {
		if h, p, err := net.SplitHostPort(cfg.ListenAddr); err == nil {
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

// startHA starts the HA server or client on the opened store. The slave's
// metadata copy starts later (startMetaSync), once the tables are open.
func (r *replication) startHA() error {
	if r.server != nil {
		if err := r.server.Start(r.b.store); err != nil {
			return fmt.Errorf("broker: %w", err)
		}
		return nil
	}
	if err := r.client.Start(r.b.store); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	return nil
}

// startMetaSync starts a slave's metadata copy; register asks for a
// NameServer registration round.
func (r *replication) startMetaSync(register func()) {
	if r.meta != nil {
		r.meta.start(register)
	}
}

// awaitsMaster reports a slave that has not learnt its master's main
// address yet (no NameServer answer named one; haMasterAddress names only
// the HA port): the registrar
// then registers again soon instead of after the 30 s period, since the
// answer is how a slave finds its master.
func (r *replication) awaitsMaster() bool {
	return r.client != nil && r.masterMainAddr() == ""
}

// close stops replication: the metadata copy, then the HA client or
// server (a SYNC_MASTER's waiting puts end with FLUSH_SLAVE_TIMEOUT).
func (r *replication) close() error {
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
func (r *replication) haServerAddr() string {
	if r.server != nil {
		if a := r.server.Addr(); a != nil {
			host, _, err := net.SplitHostPort(r.b.cfg.HAServerAddr())
			if err == nil {
				return net.JoinHostPort(host, strconv.Itoa(a.(*net.TCPAddr).Port))
			}
		}
	}
	return r.b.cfg.HAServerAddr()
}

// masterHAAddr is where a slave replicates from: haMasterAddress when
// configured, else what the NameServer answered.
func (r *replication) masterHAAddr() string {
	if a := r.b.cfg.HAMasterAddress; a != "" {
		return a
	}
	if p := r.masterHA.Load(); p != nil {
		return *p
	}
	return ""
}

func (r *replication) masterMainAddr() string {
	if p := r.masterAddr.Load(); p != nil {
		return *p
	}
	return ""
}

// learn takes the master's addresses from a REGISTER_BROKER answer (filled
// for a slave whose master is registered; §3.6).
func (r *replication) learn(resp *remoting.Command) {
	if r.client == nil {
		return
	}
	var h protocol.RegisterBrokerResponseHeader
	if err := h.Decode(resp.ExtFields); err != nil {
		return
	}
	if h.MasterAddr != "" && h.MasterAddr != r.masterMainAddr() {
		r.b.log.Info("broker: master address learnt", "master", h.MasterAddr)
		r.masterAddr.Store(&h.MasterAddr)
		r.meta.kick()
	}
	if h.HAServerAddr != "" && h.HAServerAddr != r.masterHAAddr() {
		r.b.log.Info("broker: master HA address learnt", "masterHA", h.HAServerAddr)
		r.masterHA.Store(&h.HAServerAddr)
		r.client.Kick()
	}
}

// HAServer is the master's HA server (nil on a slave).
func (b *Broker) HAServer() *ha.Server { return b.repl.server }

// HAStatus is the slave's replication status (zero on a master).
func (b *Broker) HAStatus() ha.Status {
	if b.repl.client == nil {
		return ha.Status{}
	}
	return b.repl.client.Status()
}

// defaultSlaveSyncInterval is how often a slave polls a rocketd master's
// metadata; a master that answers in full (Java) is polled every
// slaveSyncFullInterval, Java's own period.
const defaultSlaveSyncInterval = 500 * time.Millisecond

// minSendWorkers is the least number of send workers. Java answers a send
// from a future completed by the store (or the HA service), releasing its
// send thread at once; here the worker waits: for the write of the record
// (every put: an unwritten record may still be taken back, see
// commitlog's Failures), for the group-commit fdatasync (SYNC_FLUSH) or the
// slave's ack (SYNC_MASTER). So the pool must cover the sends in flight
// during one such wait, or throughput collapses to workers/wait
// (BenchmarkBrokerProduce64: SYNC_MASTER at 23% of ASYNC_MASTER with the
// default 2 workers on 2 CPUs; a SYNC_FLUSH broker made one fsync per 2
// messages, ~2k msgs/s at 64 producers).
const minSendWorkers = 128

// sendWorkers is the send family's worker count.
func sendWorkers(bc *config.BrokerConfig) int {
	return max(bc.SendMessageThreadPoolNums, minSendWorkers)
}
