package broker

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/rocketd/rocketd/internal/broker/txn"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/metrics"
)

// newTxn builds the transaction service over the broker's store, metadata
// and client registry (checks go to a live connection of the half
// message's producer group), and starts its check-back on a master.
func (b *Broker) newTxn(storeHost netip.AddrPort, fileReserved time.Duration) (*txn.Service, error) {
	s, err := txn.New(txn.Config{
		Store: b.store, Topics: b.topics, Offsets: b.offsets,
		PickProducer: func(group string) (txn.Producer, bool) {
			ci, ok := b.clients.PickProducerChannel(group)
			if ok {
				return ci.Channel, true
			}
			// A gRPC producer (its group is the topic) gets the check on
			// its telemetry stream.
			if g := b.grpcLive.Load(); g != nil {
				if p, ok := g.PickProducer(group); ok {
					return p, true
				}
			}
			return nil, false
		},
		StoreHost:        storeHost,
		Timeout:          b.cfg.TransactionTimeout,
		CheckMax:         b.cfg.TransactionCheckMax,
		CheckInterval:    b.cfg.TransactionCheckInterval,
		FileReservedTime: fileReserved,
		Committed: func(topic string, msgs, bytes int) {
			b.stats.TopicPut(topic, msgs, bytes)
		},
		Observer: txnObserver(b.events),
		Logger:   b.log,
	})
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	if b.events != nil && !b.store.LastExitOK() {
		// After a crash the saved half-message counts miss what changed
		// since their last save: rebuild them from the half and op
		// queues, before the check-back and any request can change them.
		start := time.Now()
		if counts, err := s.CountLive(); err != nil {
			b.log.Warn("broker: half-message counts not rebuilt, the saved ones are kept", "err", err)
		} else {
			b.events.SetHalfCounts(counts)
			b.log.Info("broker: half-message counts rebuilt after an abnormal exit", "topics", len(counts), "took", time.Since(start))
		}
	}
	// The check-back writes to the store: masters only (rocketmq-spec.md
	// §11.2). A slave keeps the service for END_TRANSACTION's refusal.
	if b.cfg.BrokerRole == config.Slave {
		return s, nil
	}
	if err := s.Start(); err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	return s, nil
}

// txnObserver is e as a txn.Observer: nil stays a nil interface.
func txnObserver(e *metrics.Events) txn.Observer {
	if e == nil {
		return nil
	}
	return e
}
