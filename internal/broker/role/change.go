package role

import (
	"context"
	"errors"
	"fmt"

	"github.com/rocketd/rocketd/internal/config"
)

// ErrClosed refuses a role change after Close.
var ErrClosed = errors.New("broker: role closed")

// ErrNotStarted refuses a role change before Start.
var ErrNotStarted = errors.New("broker: role not started")

// StaleEpochError refuses a role change to an epoch older than the one
// the broker already took or follows (a fenced order).
type StaleEpochError struct{ Epoch, Current int32 }

func (e *StaleEpochError) Error() string {
	return fmt.Sprintf("broker: role change to epoch %d refused: epoch %d is current", e.Epoch, e.Current)
}

// masterRole is the role a promoted broker takes: broker.conf's when it
// names a master, else ASYNC_MASTER (a SLAVE's puts wait for no replica;
// the controller's ack policy, allAckInSyncStateSet, is its own work).
func (r *Role) masterRole() config.BrokerRole {
	if r.bc.BrokerRole != config.Slave {
		return r.bc.BrokerRole
	}
	return config.AsyncMaster
}

// BecomeMaster makes the broker its group's master for epoch, without a
// restart: a slave stops its metadata copy and HA client (no replicated
// byte is appended afterwards), its store catches up dispatching and
// takes puts, the HA server starts, and the broker registers with
// brokerId 0 at every NameServer before BecomeMaster returns (clients
// follow through their routes). On a master it only records a newer
// epoch. An epoch older than the current one is refused
// (StaleEpochError). If the store cannot take puts (ctx ended before
// dispatch caught up) the broker goes back to being a slave of the same
// master and the error is returned.
func (r *Role) BecomeMaster(ctx context.Context, epoch int32) error {
	r.mu.Lock()
	err := r.becomeMaster(ctx, epoch)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	return r.reg.awaitRound(ctx)
}

func (r *Role) becomeMaster(ctx context.Context, epoch int32) error {
	cur, err := r.changeable(epoch)
	if err != nil {
		return err
	}
	if cur.master() {
		if epoch != cur.epoch {
			if err := r.takeEpoch(epoch); err != nil {
				return err
			}
			next := *cur
			next.epoch = epoch
			r.cur.Store(&next)
		}
		return nil
	}
	r.log.Info("broker: becoming master", "epoch", epoch, "from", cur.role)
	if err := cur.stop(); err != nil {
		r.log.Warn("broker: stop slave replication", "err", err)
	}
	if err := r.store.BecomeMaster(ctx); err != nil {
		r.log.Error("broker: promotion failed, staying a slave", "err", err)
		r.backToSlave(cur)
		return fmt.Errorf("broker: become master: %w", err)
	}
	if err := r.takeEpoch(epoch); err != nil {
		r.store.BecomeSlave()
		r.backToSlave(cur)
		return fmt.Errorf("broker: become master: %w", err)
	}
	role := r.masterRole()
	server := r.newServer(role)
	if err := server.Start(r.store); err != nil {
		r.store.BecomeSlave()
		r.backToSlave(cur)
		return fmt.Errorf("broker: become master: %w", err)
	}
	if svc := r.cfg.Services; svc != nil {
		if err := svc.StartMaster(); err != nil {
			// Whatever started stops again: a master without its
			// delivery would hold parked messages for ever.
			if serr := svc.StopMaster(); serr != nil {
				r.log.Warn("broker: stop master services", "err", serr)
			}
			r.store.BecomeSlave()
			if serr := server.Close(); serr != nil {
				r.log.Warn("broker: stop HA server", "err", serr)
			}
			r.backToSlave(cur)
			return fmt.Errorf("broker: become master: start services: %w", err)
		}
	}
	r.cur.Store(&state{role: role, brokerID: masterID, epoch: epoch, server: server})
	r.log.Info("broker: master", "epoch", epoch, "role", role, "ha", server.Addr())
	return nil
}

// BecomeSlave makes the broker a slave (brokerId brokerID > 0) of the
// master at masterAddr (main port: the metadata copy) and masterHAAddr
// (HA port), following epoch, without a restart: a master's store stops
// taking puts and lets the ones in flight finish (each is answered as
// the store completes it; later ones get SERVICE_NOT_AVAILABLE), its HA
// server stops, the HA client and the metadata copy start, and the
// broker registers with brokerID before BecomeSlave returns. On a slave
// it follows the new master. An epoch older than the current one is
// refused (StaleEpochError).
func (r *Role) BecomeSlave(ctx context.Context, masterAddr, masterHAAddr string, brokerID int64, epoch int32) error {
	if brokerID <= masterID {
		return fmt.Errorf("broker: become slave: brokerId %d: a slave's brokerId is > 0", brokerID)
	}
	if masterAddr == "" || masterHAAddr == "" {
		return fmt.Errorf("broker: become slave: master address %q and HA address %q are both needed", masterAddr, masterHAAddr)
	}
	r.mu.Lock()
	err := r.becomeSlave(masterAddr, masterHAAddr, brokerID, epoch)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	return r.reg.awaitRound(ctx)
}

func (r *Role) becomeSlave(masterAddr, masterHAAddr string, brokerID int64, epoch int32) error {
	cur, err := r.changeable(epoch)
	if err != nil {
		return err
	}
	r.log.Info("broker: becoming slave", "master", masterAddr, "masterHA", masterHAAddr, "brokerId", brokerID,
		"epoch", epoch, "from", cur.role)
	if cur.master() {
		// The master's own writers first, while the store still takes
		// their last puts and progress; then the clients' puts: the ones
		// in flight still wait on the running server.
		if svc := r.cfg.Services; svc != nil {
			if err := svc.StopMaster(); err != nil {
				r.log.Warn("broker: stop master services", "err", err)
			}
		}
		r.store.BecomeSlave()
	}
	if err := cur.stop(); err != nil {
		r.log.Warn("broker: stop replication", "err", err)
	}
	r.masterAddr.Store(&masterAddr)
	r.masterHA.Store(&masterHAAddr)
	r.assigned.Store(true)
	r.startSlave(brokerID, epoch)
	return nil
}

// takeEpoch records in the store's epoch file that epoch's master writes
// from the CommitLog's end on (Java's AutoSwitchHAService.changeToMaster:
// entries of epoch and later are dropped first). Epoch 0 is no epoch
// (master/slave mode without a controller): nothing is written.
func (r *Role) takeEpoch(epoch int32) error {
	if epoch <= 0 {
		return nil
	}
	epochs := r.store.Epochs()
	if epochs.LastEpoch() >= epoch {
		if err := epochs.TruncateSuffixByEpoch(epoch); err != nil {
			return err
		}
	}
	return epochs.Append(epoch, r.store.CommitLogMaxOffset())
}

// changeable checks that the role may change to epoch and returns the
// current state. REQUIRES: r.mu held.
func (r *Role) changeable(epoch int32) (*state, error) {
	switch {
	case r.closed:
		return nil, ErrClosed
	case !r.started:
		return nil, ErrNotStarted
	}
	cur := r.cur.Load()
	if epoch < cur.epoch {
		return nil, &StaleEpochError{Epoch: epoch, Current: cur.epoch}
	}
	return cur, nil
}

// backToSlave undoes a failed promotion from cur: the slave it was, or
// undecided again. REQUIRES: r.mu held, the store refusing puts.
func (r *Role) backToSlave(cur *state) {
	if cur.undecided {
		r.cur.Store(cur)
		return
	}
	r.startSlave(cur.brokerID, cur.epoch)
}

// startSlave starts the HA client and the metadata copy and makes them
// the current state. REQUIRES: r.mu held, the store refusing puts.
func (r *Role) startSlave(brokerID int64, epoch int32) {
	st := &state{role: config.Slave, brokerID: brokerID, epoch: epoch, client: r.newClient(brokerID, epoch)}
	st.meta = newSlaveSync(r, r.masterMainAddr, r.cfg.SlaveSyncInterval, r.cfg.SlaveFullSyncInterval)
	if err := st.client.Start(r.store); err != nil {
		// Only a second Start fails: the client is new.
		r.log.Error("broker: start HA client", "err", err)
	}
	st.meta.start(r.reg.kick)
	r.cur.Store(st)
	r.log.Info("broker: slave", "brokerId", brokerID, "epoch", epoch, "master", r.masterMainAddr(), "masterHA", r.masterHAAddr())
}

// masterID is a master's brokerId.
const masterID = 0
