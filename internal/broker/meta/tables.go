package meta

import (
	"errors"
	"fmt"

	"github.com/rocketd/rocketd/internal/config"
)

// Tables bundles the four tables of a broker for the controller: Open loads
// them all, Start starts the periodic consumer-offset persist, Close ends it
// and writes every file a last time.
type Tables struct {
	Topics       *Topics
	Groups       *Groups
	Offsets      *Offsets
	DelayOffsets *DelayOffsets

	bc config.BrokerConfig
}

// Open loads topics, subscription groups, consumer offsets and delay
// offsets from opts.Dir (normally ConfigDir(bc.StorePathRootDir)).
func Open(opts Options, bc *config.BrokerConfig) (*Tables, error) {
	topics, err := OpenTopics(opts, bc)
	if err != nil {
		return nil, err
	}
	groups, err := OpenGroups(opts, bc)
	if err != nil {
		return nil, err
	}
	offsets, err := OpenOffsets(opts)
	if err != nil {
		return nil, err
	}
	delay, err := OpenDelayOffsets(opts)
	if err != nil {
		return nil, err
	}
	return &Tables{Topics: topics, Groups: groups, Offsets: offsets, DelayOffsets: delay, bc: *bc}, nil
}

// Start persists consumer offsets every flushConsumerOffsetInterval (5 s).
// Delay offsets are left to the schedule service, which knows when they
// move (DelayOffsets.StartAutoPersist).
func (t *Tables) Start() error {
	if err := t.Offsets.StartAutoPersist(t.bc.FlushConsumerOffsetInterval); err != nil {
		return fmt.Errorf("meta: start: %w", err)
	}
	return nil
}

// Close stops the periodic persists and writes consumer offsets, delay
// offsets, topics and subscription groups, in the order of the broker's
// shutdown (architecture.md). It returns every failure; later calls write
// the topic and group files again and return their errors.
func (t *Tables) Close() error {
	return errors.Join(
		t.Offsets.Close(),
		t.DelayOffsets.Close(),
		t.Topics.Persist(),
		t.Groups.Persist(),
	)
}
