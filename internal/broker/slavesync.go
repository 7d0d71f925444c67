package broker

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/vfs"
)

// slaveSync copies the master's metadata to a slave (Java's
// SlaveSynchronize): topic configs, consumer offsets, delay offsets and
// subscription groups, so a consumer that moves to the slave continues
// where it was. One goroutine; first copy soon after start (or as soon as
// the master's address is learnt), then every interval.
type slaveSync struct {
	b        *Broker
	fs       vfs.FS
	master   func() string
	interval time.Duration
	first    time.Duration

	kickc chan struct{}
	quit  chan struct{}
	done  chan struct{}
	// started is set by start before the goroutine runs; close reads it
	// after (never concurrently: Start and Shutdown are sequential).
	started bool
}

func newSlaveSync(b *Broker, fs vfs.FS, master func() string, interval time.Duration) *slaveSync {
	if interval <= 0 {
		interval = defaultSlaveSyncInterval
	}
	return &slaveSync{b: b, fs: fs, master: master, interval: interval, first: min(3*time.Second, interval),
		kickc: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

func (s *slaveSync) start() {
	s.started = true
	go s.loop()
}

func (s *slaveSync) close() {
	select {
	case <-s.quit:
		return
	default:
	}
	close(s.quit)
	if s.started {
		<-s.done
	}
}

func (s *slaveSync) kick() {
	select {
	case s.kickc <- struct{}{}:
	default:
	}
}

func (s *slaveSync) loop() {
	defer close(s.done)
	t := time.NewTimer(s.first)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		case <-s.kickc:
		}
		if addr := s.master(); addr != "" {
			if err := s.syncOnce(addr); err != nil {
				s.b.log.Warn("broker: copy of the master's metadata failed", "master", addr, "err", err)
			}
		}
		t.Reset(s.interval)
	}
}

// syncOnce copies every table once; it keeps going past a failed table and
// returns the first error.
func (s *slaveSync) syncOnce(addr string) error {
	var first error
	for _, step := range []struct {
		code  protocol.RequestCode
		apply func([]byte) error
	}{
		{protocol.GetAllTopicConfig, s.applyTopics},
		{protocol.GetAllConsumerOffset, s.applyOffsets},
		{protocol.GetAllDelayOffset, s.applyDelayOffsets},
		{protocol.GetAllSubscriptionGroupConfig, s.applyGroups},
	} {
		err := s.fetch(addr, step.code, step.apply)
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (s *slaveSync) fetch(addr string, code protocol.RequestCode, apply func([]byte) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	go func() { // shutdown cuts a slow request short
		select {
		case <-s.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	resp, err := s.b.nsClient.Invoke(ctx, addr, remoting.NewRequest(code, nil, nil))
	switch {
	case err != nil:
		return fmt.Errorf("request %d: %w", code, err)
	case code == protocol.GetAllDelayOffset && resp.Code == protocol.SystemError:
		return nil // the master has no delay offsets yet
	case resp.Code != protocol.Success:
		return fmt.Errorf("request %d: code %d: %s", code, resp.Code, resp.Remark)
	}
	if err := apply(resp.Body); err != nil {
		return fmt.Errorf("request %d: %w", code, err)
	}
	return nil
}

// applyTopics makes the slave's topic table the master's: changed topics
// are put, topics the master no longer has are deleted.
func (s *slaveSync) applyTopics(body []byte) error {
	var w protocol.TopicConfigSerializeWrapper
	if err := protocol.UnmarshalFastJSON(body, &w); err != nil {
		return err
	}
	topics := s.b.topics
	for name, tc := range w.TopicConfigTable {
		if cur, ok := topics.Get(name); ok && reflect.DeepEqual(cur, tc) {
			continue
		}
		if err := topics.Put(tc); err != nil {
			return err
		}
	}
	for _, name := range topics.Names() {
		if _, ok := w.TopicConfigTable[name]; !ok {
			if _, err := topics.Delete(name); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyOffsets takes the master's consumer offsets (keys "topic@group").
func (s *slaveSync) applyOffsets(body []byte) error {
	var t protocol.ConsumerOffsetTable
	if err := protocol.UnmarshalFastJSON(body, &t); err != nil {
		return err
	}
	for key, queues := range t.OffsetTable {
		topic, group, ok := strings.Cut(key, "@")
		if !ok {
			continue
		}
		for q, off := range queues {
			s.b.offsets.Commit(group, topic, q, off)
		}
	}
	return nil
}

// applyDelayOffsets writes the master's delayOffset.json text as the
// slave's (Java does the same; the schedule service reads it if the slave
// is ever promoted).
func (s *slaveSync) applyDelayOffsets(body []byte) error {
	var t protocol.DelayOffsetTable
	if err := protocol.UnmarshalFastJSON(body, &t); err != nil {
		return err
	}
	name := filepath.Join(meta.ConfigDir(s.b.cfg.StorePathRootDir), meta.DelayOffsetFile)
	if cur, err := vfs.ReadFile(s.fs, name); err == nil && bytes.Equal(cur, body) {
		return nil
	}
	return vfs.WriteFileAtomic(s.fs, name, body)
}

// applyGroups puts the master's subscription groups that differ.
func (s *slaveSync) applyGroups(body []byte) error {
	var t protocol.SubscriptionGroupTable
	if err := protocol.UnmarshalFastJSON(body, &t); err != nil {
		return err
	}
	for name, gc := range t.SubscriptionGroupTable {
		if cur, ok := s.b.groups.Get(name); ok && reflect.DeepEqual(cur, gc) {
			continue
		}
		if err := s.b.groups.Put(gc); err != nil {
			return err
		}
	}
	return nil
}
