package role

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/rocketd/rocketd/internal/ha"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/store/commitlog"
)

// haVariant is the one seam between controller mode and the replication
// protocol it runs on. Today's is classicHA: RocketMQ's master/slave HA
// byte protocol of internal/ha, whose handshake carries neither epochs
// nor brokerIds, so the slave side prepares its store itself and the
// master tells its slaves apart by host. Java's AutoSwitch protocol
// (epoch handshake, truncation to the consistent point inside the HA
// client, slave ids on each connection) replaces it by implementing the
// same two methods and assigning variant.
type haVariant interface {
	// prepareSlave readies st (refusing puts, no HA client running) to
	// replicate from a master whose epoch file and CommitLog end master
	// describes: the log cut back to the last offset both share.
	prepareSlave(st Store, master *protocol.EpochEntryCache) error
	// slaveAcks lists the connected slaves of s with the CommitLog offset
	// each acknowledged and its brokerId (-1 when the variant cannot tell;
	// resolve maps a connection's host to a brokerId, or -1).
	slaveAcks(s *ha.Server, resolve func(host string) int64) []slaveAck
}

// slaveAck is one connected slave's acknowledged offset.
type slaveAck struct {
	ID    int64 // -1: unknown
	Acked int64
}

// variant is the HA variant controller mode runs.
var variant haVariant = classicHA{}

// classicHA is controller mode over today's HA protocol.
type classicHA struct{}

// ErrNoConsistentPoint refuses to replicate from a master whose log
// shares no epoch with this one's (Java's doTruncate refuses the same).
var ErrNoConsistentPoint = errors.New("broker: no epoch shared with the master: refusing to replicate (clear this broker's store to start it as a new replica)")

// prepareSlave is Java's AutoSwitchHAClient.doTruncate done before the HA
// client starts: with no local epochs (a new replica, or one that never
// followed a controller) nothing is cut; else the store is cut to the
// consistent point of the two epoch files (each last entry ending at its
// log's end). Then the master's entries past the local ones are copied
// into the local epoch file, which classic HA does not carry, so that
// this broker's file describes the log it is about to hold (and it can be
// compared when it is promoted, or returns as a slave).
func (classicHA) prepareSlave(st Store, master *protocol.EpochEntryCache) error {
	epochs := st.Epochs()
	other := masterEntries(master)
	local := epochs.Entries()
	end := st.CommitLogMaxOffset()
	if n := len(local); n > 0 {
		local[n-1].EndOffset = end
		cp := store.ConsistentPoint(local, other)
		if cp < 0 {
			return fmt.Errorf("%w (local epochs %v, master's %v)", ErrNoConsistentPoint, local, other)
		}
		if cp < end {
			t, ok := st.(truncater)
			if !ok {
				return errors.New("broker: the store cannot be truncated")
			}
			if err := t.TruncateTo(cp); err != nil {
				return fmt.Errorf("broker: truncate to the consistent point %d: %w", cp, err)
			}
		}
	}
	last := epochs.LastEpoch()
	for _, e := range other {
		if e.Epoch <= last {
			continue
		}
		if err := epochs.Append(e.Epoch, e.StartOffset); err != nil {
			return fmt.Errorf("broker: copy the master's epoch %d: %w", e.Epoch, err)
		}
	}
	return nil
}

// truncater is the store's TruncateTo (store.Store has it; the role's
// Store interface leaves it out so that test stores need not).
type truncater interface{ TruncateTo(offset int64) error }

func (classicHA) slaveAcks(s *ha.Server, resolve func(host string) int64) []slaveAck {
	slaves := s.Slaves()
	out := make([]slaveAck, len(slaves))
	for i, sl := range slaves {
		id := int64(-1)
		if host, _, err := net.SplitHostPort(sl.Addr); err == nil && resolve != nil {
			id = resolve(host)
		}
		out[i] = slaveAck{ID: id, Acked: sl.Acked}
	}
	return out
}

// ackPolicy is allAckInSyncStateSet on a master: a put is answered PUT_OK
// once every member of the SyncStateSet has it (Java's
// GroupTransferService with ALL_ACK_IN_SYNC_STATE_SET), and only while
// the set, the master included, has minInSyncReplicas members (Java
// refuses before the write with IN_SYNC_REPLICAS_NOT_ENOUGH; here the
// put is already written, so it is answered SLAVE_NOT_AVAILABLE: stored,
// not replicated, never SEND_OK). Replaced whole when the set changes.
type ackPolicy struct {
	members   []int64 // the SyncStateSet but the master
	minInSync int
	timeout   time.Duration
	resolve   func(host string) int64
}

// ackPollMin and ackPollMax pace the wait for the members after the
// first slave's ack: today's HA server wakes a waiter on the first ack
// only, so the others are polled (the AutoSwitch variant's per-slave
// acks make this a wake-up).
const (
	ackPollMin = 50 * time.Microsecond
	ackPollMax = 2 * time.Millisecond
)

// wait waits until every member acknowledged end on s.
func (p *ackPolicy) wait(ctx context.Context, s *ha.Server, end int64) commitlog.PutStatus {
	if len(p.members)+1 < p.minInSync {
		s.Wait(ctx, end) // wakes the transfers
		return commitlog.SlaveNotAvailable
	}
	if len(p.members) == 0 {
		return commitlog.PutOK
	}
	// The server is synchronous here: it returns once a slave acked.
	if st := s.Wait(ctx, end); st != commitlog.PutOK {
		return st
	}
	deadline := time.Now().Add(p.timeout)
	pause := ackPollMin
	for {
		if p.covered(variant.slaveAcks(s, p.resolve), end) {
			return commitlog.PutOK
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return commitlog.FlushSlaveTimeout
		}
		time.Sleep(pause)
		pause = min(2*pause, ackPollMax)
	}
}

// covered reports whether acks show every member holding end. A member
// the variant names must have acked it; the members it cannot name are
// matched by the connections it cannot name: as many of those as members
// unnamed, and every one of them, must have acked end. So a lagging
// member that is connected always holds the put back (on a shared host
// a stopped slave's silent connection does so until the HA server
// closes it, haHousekeepingInterval, whether or not it is still a
// member); what remains possible there is a disconnected member
// replaced by a caught-up non-member, until the member leaves the set.
// Classic HA on one host per broker (the usual deployment) names every
// connection and has neither limit.
func (p *ackPolicy) covered(acks []slaveAck, end int64) bool {
	unnamed := 0
	for _, id := range p.members {
		found := false
		for _, a := range acks {
			if a.ID == id {
				if a.Acked < end {
					return false
				}
				found = true
				break
			}
		}
		if !found {
			unnamed++
		}
	}
	if unnamed == 0 {
		return true
	}
	n := 0
	for _, a := range acks {
		if a.ID >= 0 {
			continue
		}
		if a.Acked < end {
			return false
		}
		n++
	}
	return n >= unnamed
}
