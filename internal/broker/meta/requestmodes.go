package meta

import (
	"fmt"
	"maps"
	"sync"

	"github.com/rocketd/rocketd/internal/protocol"
)

// RequestModes is the message request mode of each topic@group
// (SET_MESSAGE_REQUEST_MODE; Java's MessageRequestModeManager), persisted
// to config/messageRequestMode.json on every change. Safe for concurrent
// use; readers never wait for file I/O.
type RequestModes struct {
	file *configFile

	mu struct {
		sync.RWMutex
		table map[string]map[string]protocol.SetMessageRequestModeRequestBody // topic -> group
	}
}

// OpenRequestModes loads config/messageRequestMode.json (or its .bak).
func OpenRequestModes(opts Options) (*RequestModes, error) {
	if err := opts.ensureDefaults(); err != nil {
		return nil, err
	}
	m := &RequestModes{file: opts.file(RequestModeFile)}
	m.mu.table = map[string]map[string]protocol.SetMessageRequestModeRequestBody{}
	_, err := m.file.load(func(data []byte) error {
		var t protocol.MessageRequestModeTable
		if err := protocol.UnmarshalFastJSON(data, &t); err != nil {
			return err
		}
		for topic, groups := range t.MessageRequestModeMap {
			if groups != nil {
				m.mu.table[topic] = groups
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("meta: message request modes: %w", err)
	}
	return m, nil
}

// Get returns the mode set for topic@group; false when none was set.
func (m *RequestModes) Get(topic, group string) (protocol.SetMessageRequestModeRequestBody, bool) {
	m.mu.RLock()
	b, ok := m.mu.table[topic][group]
	m.mu.RUnlock()
	return b, ok
}

// Set records b under b.Topic and b.ConsumerGroup and writes the file; the
// change is usable in memory even when the write fails.
func (m *RequestModes) Set(b protocol.SetMessageRequestModeRequestBody) error {
	m.mu.Lock()
	groups := m.mu.table[b.Topic]
	if groups == nil {
		groups = map[string]protocol.SetMessageRequestModeRequestBody{}
		m.mu.table[b.Topic] = groups
	}
	groups[b.ConsumerGroup] = b
	m.mu.Unlock()
	return m.Persist()
}

// Snapshot returns a copy in the file form.
func (m *RequestModes) Snapshot() protocol.MessageRequestModeTable {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t := protocol.MessageRequestModeTable{MessageRequestModeMap: make(map[string]map[string]protocol.SetMessageRequestModeRequestBody, len(m.mu.table))}
	for topic, groups := range m.mu.table {
		t.MessageRequestModeMap[topic] = maps.Clone(groups)
	}
	return t
}

// Persist writes config/messageRequestMode.json now.
func (m *RequestModes) Persist() error {
	return m.file.persist(func() ([]byte, error) {
		return protocol.MarshalFastJSONPretty(m.Snapshot())
	})
}
