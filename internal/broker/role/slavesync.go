package role

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/rocketd/rocketd/internal/lifecycle"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/vfs"
)

// slaveSync copies the master's metadata to a slave (Java's
// SlaveSynchronize): topic configs, consumer offsets, delay offsets and
// subscription groups, so a consumer that moves to the slave continues
// where it was. One goroutine polls the master every interval (500 ms),
// sending the version of each table it holds; a rocketd master answers an
// unchanged table with an empty body and consumer offsets with what
// changed (protocol doc.go, "Slave metadata copy"), so a change reaches
// the slave within one interval at the cost of four small round trips. A
// master whose answers carry no version (Java) answers in full every time:
// it is polled every fullInterval (Java's 10 s) instead.
type slaveSync struct {
	r            *Role
	master       func() string
	register     func() // asks for a NameServer registration round soon
	interval     time.Duration
	fullInterval time.Duration

	svc lifecycle.Loop // the copying goroutine; kick wakes it

	// The loop goroutine's own state.
	ctx   context.Context                       // cancelled by close: cuts a request in progress short
	addr  string                                // the master the versions below are of
	known map[protocol.RequestCode]tableVersion // version of each master table last applied
	fails failureLog                            // rate-limits the warning of a failing copy
	lost  backoff                               // re-registration while the master is unreachable
	apply map[protocol.RequestCode]func([]byte) error
	// lastAuth is when users and ACLs were last copied (slavesync_auth.go).
	lastAuth time.Time
}

// tableVersion is a master table's version as SlaveSyncResponseHeader
// carries it.
type tableVersion struct{ stamp, count int64 }

// slaveSyncFullInterval is how often a slave copies the tables of a master
// that answers in full (Java's SlaveSynchronize period).
const slaveSyncFullInterval = 10 * time.Second

// slaveSyncRequestTimeout bounds one copy request.
const slaveSyncRequestTimeout = 3 * time.Second

func newSlaveSync(r *Role, master func() string, interval, fullInterval time.Duration) *slaveSync {
	if interval <= 0 {
		interval = defaultSlaveSyncInterval
	}
	if fullInterval <= 0 {
		fullInterval = slaveSyncFullInterval
	}
	s := &slaveSync{r: r, master: master, register: func() {}, interval: interval,
		fullInterval: max(interval, fullInterval),
		known:        map[protocol.RequestCode]tableVersion{},
		lost:         backoff{min: time.Second, max: 30 * time.Second},
	}
	s.apply = map[protocol.RequestCode]func([]byte) error{
		protocol.GetAllTopicConfig:             s.applyTopics,
		protocol.GetAllConsumerOffset:          s.applyOffsets,
		protocol.GetAllDelayOffset:             s.applyDelayOffsets,
		protocol.GetAllSubscriptionGroupConfig: s.applyGroups,
	}
	return s
}

// start runs the loop; register is called (it must not block) when the
// master stops answering, so that a NameServer that lost the master
// learns from the slave's registration which topics the slave serves.
func (s *slaveSync) start(register func()) {
	s.register = register
	s.svc.Start("broker-slave-sync", s.loop)
}

func (s *slaveSync) close() { s.svc.Close() }

// kick asks for a copy now (the master's address was learnt).
func (s *slaveSync) kick() { s.svc.Kick() }

func (s *slaveSync) loop(ctx context.Context) {
	s.ctx = ctx
	t := time.NewTimer(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.svc.Kicked():
		}
		next := s.interval
		if addr := s.master(); addr != "" {
			if addr != s.addr { // another master: its versions mean nothing here
				s.addr, s.known, s.lastAuth = addr, map[protocol.RequestCode]tableVersion{}, time.Time{}
			}
			versioned, err := s.syncOnce(addr)
			var unreachable *unreachableError
			if !errors.As(err, &unreachable) {
				if terr := s.syncTimerCheckpoint(addr); err == nil {
					err = terr
				}
			}
			if !errors.As(err, &unreachable) {
				if aerr := s.syncAuthDue(addr, time.Now()); err == nil {
					err = aerr
				}
			}
			s.report(addr, err)
			if !versioned {
				next = s.fullInterval
			}
		}
		if !t.Stop() {
			select { // a tick that fired while a kick was served
			case <-t.C:
			default:
			}
		}
		t.Reset(next)
	}
}

// syncOnce copies every table once and reports whether the master
// answered with versions (a rocketd master). It keeps going past a table
// that fails to apply and returns the first error; a master that cannot be
// reached ends the round.
func (s *slaveSync) syncOnce(addr string) (versioned bool, err error) {
	versioned = true
	for _, code := range []protocol.RequestCode{
		protocol.GetAllTopicConfig,
		protocol.GetAllConsumerOffset,
		protocol.GetAllDelayOffset,
		protocol.GetAllSubscriptionGroupConfig,
	} {
		v, ferr := s.fetch(addr, code)
		versioned = versioned && v
		var unreachable *unreachableError
		if errors.As(ferr, &unreachable) {
			return versioned, ferr
		}
		if ferr != nil && err == nil {
			err = ferr
		}
	}
	return versioned, err
}

// unreachableError is a copy request that got no answer.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

// fetch requests one table with the version the slave holds and applies
// the answer unless it is unchanged. versioned reports an answer that
// carried the master's version.
func (s *slaveSync) fetch(addr string, code protocol.RequestCode) (versioned bool, err error) {
	var h protocol.SlaveSyncRequestHeader
	if v, ok := s.known[code]; ok {
		h.KnownStamp, h.KnownCount = protocol.Some(v.stamp), protocol.Some(v.count)
	}
	ctx, cancel := context.WithTimeout(s.ctx, slaveSyncRequestTimeout)
	defer cancel()
	resp, err := s.r.cfg.NS.Invoke(ctx, addr, remoting.NewRequest(code, protocol.Ext(&h), nil))
	if err != nil {
		// The master may be restarting: copy everything once it answers
		// (a table loaded from its file keeps its version, yet the
		// startup topics may have changed with the configuration).
		clear(s.known)
		return true, &unreachableError{fmt.Errorf("request %d: %w", code, err)}
	}
	var rh protocol.SlaveSyncResponseHeader
	_ = rh.Decode(resp.ExtFields) // a malformed version is no version: apply in full
	stamp, count, versioned := rh.Version()
	switch {
	case code == protocol.GetAllDelayOffset && resp.Code == protocol.SystemError:
		return true, nil // the master has no delay offsets yet (no version either)
	case resp.Code != protocol.Success:
		return versioned, fmt.Errorf("request %d: code %d: %s", code, resp.Code, resp.Remark)
	}
	if !rh.Unchanged.Value {
		if err := s.apply[code](resp.Body); err != nil {
			delete(s.known, code)
			return versioned, fmt.Errorf("request %d: %w", code, err)
		}
	}
	if versioned {
		s.known[code] = tableVersion{stamp, count}
	} else {
		delete(s.known, code)
	}
	return versioned, nil
}

// report logs a failing copy once, then every failureLogEvery while it
// keeps failing the same way, and the recovery; while the master is
// unreachable it asks for registration rounds with backoff.
func (s *slaveSync) report(addr string, err error) {
	if err == nil {
		if s.fails.recovered() {
			s.r.log.Info("broker: copy of the master's metadata works again", "master", addr)
		}
		s.lost.reset()
		return
	}
	if n, ok := s.fails.failed(err, time.Now()); ok {
		s.r.log.Warn("broker: copy of the master's metadata failed", "master", addr, "err", err, "failures", n)
	}
	var unreachable *unreachableError
	if errors.As(err, &unreachable) && s.lost.due(time.Now()) {
		s.register()
	}
}

// applyTopics makes the slave's topic table the master's: changed topics
// are put, topics the master no longer has are deleted. Every change
// re-registers the slave with the NameServers (Topics.OnChange).
func (s *slaveSync) applyTopics(body []byte) error {
	var w protocol.TopicConfigSerializeWrapper
	if err := protocol.UnmarshalFastJSON(body, &w); err != nil {
		return err
	}
	topics := s.r.tables.Topics
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
	// The static topics' mappings, when the master sends them (5.x: the
	// version always, the map when not empty).
	if m := s.r.tables.Mappings; m != nil && w.MappingDataVersion != nil {
		if _, err := m.ReplaceAll(w.TopicQueueMappingDetailMap, *w.MappingDataVersion); err != nil {
			return err
		}
	}
	return nil
}

// applyOffsets takes the master's consumer offsets (keys "topic@group"):
// the whole table or the entries changed since the slave's version.
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
			if cur, ok := s.r.tables.Offsets.Query(group, topic, q); ok && cur == off {
				continue
			}
			s.r.tables.Offsets.Commit(group, topic, q, off)
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
	name := s.r.tables.DelayOffsetPath
	if cur, err := vfs.ReadFile(s.r.cfg.FS, name); err == nil && bytes.Equal(cur, body) {
		return nil
	}
	return vfs.WriteFileAtomic(s.r.cfg.FS, name, body)
}

// applyGroups makes the slave's subscription groups the master's: changed
// groups are put, groups the master no longer has are deleted (as Java's
// syncSubscriptionGroupConfig does).
func (s *slaveSync) applyGroups(body []byte) error {
	var t protocol.SubscriptionGroupTable
	if err := protocol.UnmarshalFastJSON(body, &t); err != nil {
		return err
	}
	for name, gc := range t.SubscriptionGroupTable {
		if gc.GroupName == "" {
			gc.GroupName = name
		}
		if cur, ok := s.r.tables.Groups.Get(name); ok && reflect.DeepEqual(cur, gc) {
			continue
		}
		if err := s.r.tables.Groups.Put(gc); err != nil {
			return err
		}
	}
	for _, name := range s.r.tables.Groups.Names() {
		if _, ok := t.SubscriptionGroupTable[name]; !ok {
			if _, err := s.r.tables.Groups.Delete(name); err != nil {
				return err
			}
		}
	}
	return nil
}
