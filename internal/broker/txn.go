package broker

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/rocketd/rocketd/internal/broker/txn"
)

// newTxn builds and starts the transaction service over the broker's store,
// metadata and client registry (checks go to a live connection of the half
// message's producer group).
func (b *Broker) newTxn(storeHost netip.AddrPort, fileReserved time.Duration) (*txn.Service, error) {
	s, err := txn.New(txn.Config{
		Store: b.store, Topics: b.topics, Offsets: b.offsets,
		PickProducer: func(group string) (txn.Producer, bool) {
			ci, ok := b.clients.PickProducerChannel(group)
			if !ok {
				return nil, false
			}
			return ci.Channel, true
		},
		StoreHost:        storeHost,
		Timeout:          b.cfg.TransactionTimeout,
		CheckMax:         b.cfg.TransactionCheckMax,
		CheckInterval:    b.cfg.TransactionCheckInterval,
		FileReservedTime: fileReserved,
		Logger:           b.log,
	})
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	if err := s.Start(); err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	return s, nil
}
