package timer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/vfs"
)

// recallsName is the file of pending recalls in the timer directory.
const recallsName = "recalls"

// recallTag is RecallMessageProcessor.RECALL_MESSAGE_TAG, the tag of a
// recall marker.
const recallTag = "_RECALL_TAG_"

// recallKey names a recalled message: Java's delete key
// (TimerMessageStore.buildDeleteKey: "<realTopic>+<uniqKey>") and the
// delivery time the handle gives, so a handle for another time recalls
// nothing.
type recallKey struct {
	key       string
	deliverMs int64
}

// deleteKey is TimerMessageStore.buildDeleteKey.
func deleteKey(topic, uniqKey string) string { return topic + "+" + uniqKey }

// recalls is the set of messages recalled and not yet due, shared by the
// service's goroutine (which files markers, checks each delivery and saves
// the set) and the request goroutines that call Recall.
type recalls struct {
	mu sync.Mutex
	// pending maps a recalled message to the time after which its entry
	// is surely behind the watermark (0: its marker is not filed yet, so
	// the message itself may still be unread in the timer queue).
	pending map[recallKey]int64
	// delivering is the highest delivery time of an entry that was (or is
	// being) put to its real topic: a message due at or before it may
	// have been delivered, so recalling it is too late.
	delivering int64
	dirty      bool // changed since the file was written
}

// RecallStatus is what Recall did (an enum: the recall processor maps it
// to a response code).
type RecallStatus int

const (
	// Recalled: the message will not be delivered (or no such message is
	// pending, which Java cannot tell either: a forged but well-formed
	// handle is recalled too).
	Recalled RecallStatus = iota
	// TooLate: the message's time was reached; it may have been delivered.
	TooLate
)

// Recall marks a message as recalled: the held message of topic with
// UNIQ_KEY uniqKey, due at deliverMs, is never put to its topic. The
// caller has put the recall marker (RecallMarker) to the timer queue
// first: the service files it (recalls file), so the recall survives a
// restart; Recall only makes it take effect at once, before the marker
// is read. TooLate when an entry due at or after deliverMs was already
// delivered (the message may have been).
func (s *Service) Recall(topic, uniqKey string, deliverMs int64) RecallStatus {
	r := &s.recalls
	r.mu.Lock()
	defer r.mu.Unlock()
	k := recallKey{deleteKey(topic, uniqKey), deliverMs}
	if _, ok := r.pending[k]; ok {
		return Recalled
	}
	if deliverMs <= r.delivering {
		return TooLate
	}
	r.pending[k] = 0
	r.dirty = true
	return Recalled
}

// fileRecall registers a recall marker read from the timer queue (the
// service's goroutine): pruneAfter is the watermark after which its
// message, read from the queue before the marker, is surely handled.
func (s *Service) fileRecall(key string, deliverMs int64) {
	r := &s.recalls
	r.mu.Lock()
	defer r.mu.Unlock()
	k := recallKey{key, deliverMs}
	if _, ok := r.pending[k]; !ok && deliverMs <= r.delivering {
		return // too late: the message has been delivered
	}
	// key points into a read buffer; a map assignment stores the key it
	// is given even when an equal one is there.
	k.key = strings.Clone(key)
	r.pending[k] = max(deliverMs, s.prog.watermarkMs)
	r.dirty = true
}

// recalled reports whether the held message rec (restored) was recalled,
// and records that entries up to deliverMs are being delivered.
func (s *Service) recalled(rec *message.Record, deliverMs int64) bool {
	r := &s.recalls
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delivering = max(r.delivering, deliverMs)
	if len(r.pending) == 0 {
		return false
	}
	uniq, _ := message.Property(rec.Properties, message.PropertyUniqClientMessageIDKeyIdx)
	out, _ := message.Property(rec.Properties, message.PropertyTimerOutMS)
	outMs, err := strconv.ParseInt(out, 10, 64)
	if uniq == "" || err != nil {
		return false
	}
	_, ok := r.pending[recallKey{deleteKey(rec.Topic, uniq), outMs}]
	return ok
}

// RecallMarker builds the record RecallMessageProcessor.buildMessage
// puts, already held as Hold would hold it: topic Topic queue 0, body
// "0", tag _RECALL_TAG_, TIMER_DEL_UNIQKEY naming the message, UNIQ_KEY
// its id, TIMER_DELIVER_MS the handle's timestamp, TIMER_OUT_MS the
// message's delivery time, REAL_TOPIC and REAL_QID (0).
func RecallMarker(h RecallHandle, producerGroup string, born netip.AddrPort, now time.Time) message.Record {
	props := message.SetProperty("", message.PropertyTags, recallTag)
	props = message.SetProperty(props, message.PropertyTimerDelUniqKey, deleteKey(h.Topic, h.MessageID))
	props = message.SetProperty(props, message.PropertyUniqClientMessageIDKeyIdx, h.MessageID)
	props = message.SetProperty(props, message.PropertyTimerDeliverMS, h.Timestamp)
	props = message.SetProperty(props, message.PropertyBornTimestamp, strconv.FormatInt(now.UnixMilli(), 10))
	props = message.SetProperty(props, message.PropertyTraceContext, "")
	props = message.SetProperty(props, message.PropertyProducerGroup, producerGroup)
	props = message.SetProperty(props, message.PropertyTimerOutMS, strconv.FormatInt(h.DeliverMs(), 10))
	props = message.SetProperty(props, message.PropertyRealTopic, h.Topic)
	props = message.SetProperty(props, message.PropertyRealQueueID, "0")
	return message.Record{Topic: Topic, QueueID: 0, Body: []byte("0"), Properties: props,
		BornTimestamp: now.UnixMilli(), BornHost: born}
}

// loadRecalls reads the recalls file (see doc.go): every recall it holds
// is pending until the watermark passes max(its time, watermarkMs).
func (s *Service) loadRecalls(watermarkMs int64) error {
	s.recalls.pending = map[recallKey]int64{}
	s.recalls.delivering = watermarkMs - 1
	data, err := vfs.ReadFile(s.cfg.FS, filepath.Join(s.cfg.Dir, recallsName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("timer: read recalls: %w", err)
	}
	keys, err := decodeRecalls(data)
	if err != nil {
		return err
	}
	for _, k := range keys {
		s.recalls.pending[k] = max(k.deliverMs, watermarkMs)
	}
	return nil
}

var errBadRecalls = errors.New("timer: recalls file is corrupt")

func decodeRecalls(data []byte) ([]recallKey, error) {
	if len(data) < 8 || crc32.ChecksumIEEE(data[:len(data)-4]) != binary.BigEndian.Uint32(data[len(data)-4:]) {
		return nil, errBadRecalls
	}
	n := binary.BigEndian.Uint32(data)
	p := data[4 : len(data)-4]
	keys := make([]recallKey, 0, min(n, 1<<16))
	for range n {
		if len(p) < 10 {
			return nil, errBadRecalls
		}
		ms := int64(binary.BigEndian.Uint64(p))
		l := int(binary.BigEndian.Uint16(p[8:]))
		if len(p) < 10+l {
			return nil, errBadRecalls
		}
		keys = append(keys, recallKey{string(p[10 : 10+l]), ms})
		p = p[10+l:]
	}
	if len(p) != 0 {
		return nil, errBadRecalls
	}
	return keys, nil
}

func encodeRecalls(keys []recallKey) []byte {
	data := binary.BigEndian.AppendUint32(nil, uint32(len(keys)))
	for _, k := range keys {
		data = binary.BigEndian.AppendUint64(data, uint64(k.deliverMs))
		data = binary.BigEndian.AppendUint16(data, uint16(len(k.key)))
		data = append(data, k.key...)
	}
	return binary.BigEndian.AppendUint32(data, crc32.ChecksumIEEE(data))
}

// saveRecalls drops the recalls whose message is behind watermarkMs and
// replaces the recalls file when the set changed (before the checkpoint
// that passes their markers is written).
func (s *Service) saveRecalls(watermarkMs int64) error {
	r := &s.recalls
	r.mu.Lock()
	for k, after := range r.pending {
		if after != 0 && after < watermarkMs {
			delete(r.pending, k)
			r.dirty = true
		}
	}
	if !r.dirty {
		r.mu.Unlock()
		return nil
	}
	keys := make([]recallKey, 0, len(r.pending))
	for k := range r.pending {
		if len(k.key) <= 0xffff {
			keys = append(keys, k)
		}
	}
	r.dirty = false
	r.mu.Unlock()
	name := filepath.Join(s.cfg.Dir, recallsName)
	var err error
	if len(keys) == 0 {
		if err = s.cfg.FS.Remove(name); errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
	} else {
		err = vfs.WriteFileAtomic(s.cfg.FS, name, encodeRecalls(keys))
	}
	if err != nil {
		s.recalls.mu.Lock()
		s.recalls.dirty = true
		s.recalls.mu.Unlock()
		return fmt.Errorf("timer: write recalls: %w", err)
	}
	return nil
}
