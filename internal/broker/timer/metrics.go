package timer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rocketd/rocketd/internal/vfs"
)

// metricsName is the file of the per-topic pending counts, next to the
// checkpoint (JSON, Java's timermetrics form; written with each save).
const metricsName = "timermetrics"

// TopicMetric is one topic's count of held timer messages not yet
// delivered, and when it last changed (ms).
type TopicMetric struct {
	Count     int64 `json:"count"`
	TimeStamp int64 `json:"timeStamp"`
}

// metrics counts the held messages per real topic (Java's TimerMetrics
// timingCount): +1 when filed, -1 when delivered. Like Java's
// it is approximate: it is saved with the checkpoint, so messages filed
// again after a crash (the queue is re-read from the saved offset) may
// be counted twice, and a held record lost before its delivery (deleted
// from the CommitLog) stays counted; a count never goes below 0.
type metrics struct {
	mu     sync.Mutex
	counts map[string]*TopicMetric
}

// add changes topic's count. topic may alias a pooled read buffer (it
// comes from a record decoded without copying): a new key is cloned, and
// a known one is updated through its pointer, since assigning to a map
// entry of a string key replaces the stored key too.
func (m *metrics) add(topic string, delta, nowMs int64) {
	m.mu.Lock()
	c, known := m.counts[topic]
	if !known {
		c = &TopicMetric{}
		if m.counts == nil {
			m.counts = map[string]*TopicMetric{}
		}
		m.counts[strings.Clone(topic)] = c
	}
	c.Count = max(c.Count+delta, 0)
	c.TimeStamp = nowMs
	m.mu.Unlock()
}

func (m *metrics) snapshot() map[string]TopicMetric {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]TopicMetric, len(m.counts))
	for topic, c := range m.counts {
		out[topic] = *c
	}
	return out
}

func (m *metrics) load(counts map[string]TopicMetric) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts = make(map[string]*TopicMetric, len(counts))
	for topic, c := range counts {
		m.counts[topic] = &c
	}
}

// metricsFile is the file's JSON.
type metricsFile struct {
	TimingCount map[string]TopicMetric `json:"timingCount"`
}

// readMetrics loads the saved counts. A missing file is no counts; one
// that does not parse (it is written without fsync, see writeMetrics) is
// no counts too, reported by the caller as a warning: an approximate
// statistic never stops the timer.
func readMetrics(fsys vfs.FS, dir string) (map[string]TopicMetric, error) {
	data, err := vfs.ReadFile(fsys, filepath.Join(dir, metricsName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("timer: read %s: %w", metricsName, err)
	}
	var f metricsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errBadMetrics, metricsName, err)
	}
	return f.TimingCount, nil
}

var errBadMetrics = errors.New("timer: unreadable metrics file")

// writeMetrics replaces the file by rename (never a half-written file
// under its name), without fsync: the counts are approximate, and the
// checkpoint's save right after syncs the directory; an fsync here would
// double the timer goroutine's sync time per save.
func writeMetrics(fsys vfs.FS, dir string, counts map[string]TopicMetric) error {
	data, err := json.Marshal(metricsFile{TimingCount: counts})
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, metricsName+".tmp")
	f, err := fsys.Create(tmp)
	if err != nil {
		return fmt.Errorf("timer: create %s: %w", metricsName, err)
	}
	_, werr := f.WriteAt(data, 0)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("timer: write %s: %w", metricsName, err)
	}
	if err := fsys.Rename(tmp, filepath.Join(dir, metricsName)); err != nil {
		return fmt.Errorf("timer: rename %s: %w", metricsName, err)
	}
	return nil
}
