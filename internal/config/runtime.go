package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// LiveKey is a key UPDATE_BROKER_CONFIG / UPDATE_NAMESRV_CONFIG may change
// while the server runs, and what reads it (doc.go lists them).
type LiveKey struct {
	Key      string
	Controls string
}

// RefusalKind says why an update of a key was refused.
type RefusalKind uint8

const (
	// RefusedBlackList: the key is in configBlackList (Java refuses it too).
	RefusedBlackList RefusalKind = iota + 1
	// RefusedRestart: rocketd knows the key but reads it only at start.
	RefusedRestart
	// RefusedUnknown: no such key (Java would ignore it silently).
	RefusedUnknown
	// RefusedValue: the value does not parse or cannot work.
	RefusedValue
)

// UpdateRefusal is the error of a refused runtime update; Key names the
// first offending key (the keys are checked in sorted order).
type UpdateRefusal struct {
	Kind   RefusalKind
	Key    string
	Reason string
}

func (e *UpdateRefusal) Error() string { return "config: " + e.Key + ": " + e.Reason }

// Remark is the refusal as an UPDATE_*_CONFIG answer says it: Java's
// words for a black-listed key, with the key named.
func (e *UpdateRefusal) Remark() string {
	if e.Kind == RefusedBlackList {
		return "Can not update config in black list. key: " + e.Key
	}
	return e.Key + ": " + e.Reason
}

// Runtime holds a configuration of which the live keys may change while
// the server runs. Readers call Load and get an immutable snapshot (one
// atomic load, never a lock); Update builds the next snapshot, persists
// the changed keys, then publishes it.
type Runtime[T any] struct {
	// mu serializes updates only (Java's updateBrokerConfig is synchronized
	// too): two updates may not interleave their file rewrites. Readers
	// never take it, so holding it across the file's fsync stalls no
	// request but another config update.
	mu      sync.Mutex
	cur     atomic.Pointer[T]
	version atomic.Pointer[string]
	counter int64 // guarded by mu

	live     map[string]bool
	black    map[string]bool
	known    map[string]bool
	noEffect map[string]bool
	path     string
	prepare  func(next *T) error
	now      func() time.Time
}

// RuntimeOptions configures NewRuntime.
type RuntimeOptions[T any] struct {
	// Live are the keys Update accepts.
	Live []LiveKey
	// BlackList are keys always refused (configBlackList plus Java's fixed
	// ones), whatever Live says.
	BlackList []string
	// Known are every key the server reads (the others are unknown).
	Known map[string]bool
	// NoEffect are known keys nothing reads.
	NoEffect map[string]bool
	// Path is the properties file the changed keys are written to; empty:
	// updates are not persisted (tests of the handlers alone).
	Path string
	// Prepare normalizes and validates a candidate snapshot.
	Prepare func(next *T) error
	// Now stamps the data version (default time.Now).
	Now func() time.Time
}

// NewRuntime returns a Runtime whose first snapshot is a copy of *start.
func NewRuntime[T any](start *T, o RuntimeOptions[T]) *Runtime[T] {
	r := &Runtime[T]{
		live: map[string]bool{}, black: map[string]bool{}, known: o.Known, noEffect: o.NoEffect,
		path: o.Path, prepare: o.Prepare, now: o.Now,
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.prepare == nil {
		r.prepare = func(*T) error { return nil }
	}
	for _, k := range o.Live {
		r.live[k.Key] = true
	}
	for _, k := range o.BlackList {
		if k = strings.TrimSpace(k); k != "" {
			r.black[k] = true
		}
	}
	snap := *start
	r.cur.Store(&snap)
	r.counter = 1
	r.stampVersion()
	return r
}

// Load returns the current snapshot; the caller must not modify it.
func (r *Runtime[T]) Load() *T { return r.cur.Load() }

// Version is the configuration's DataVersion as JSON (Java's
// {"counter":N,"timestamp":ms}); the counter grows with every update.
func (r *Runtime[T]) Version() string { return *r.version.Load() }

// Path is the file updates are persisted to ("" when none).
func (r *Runtime[T]) Path() string { return r.path }

func (r *Runtime[T]) stampVersion() {
	v := fmt.Sprintf(`{"counter":%d,"timestamp":%d}`, r.counter, r.now().UnixMilli())
	r.version.Store(&v)
}

// Update applies props: every key must be live and not black-listed, and
// the resulting configuration must validate; otherwise nothing changes and
// the error is an *UpdateRefusal. The changed keys are persisted before
// the new snapshot is published, so a change is never visible without
// being durable; a failed write is an ordinary error.
func (r *Runtime[T]) Update(props Properties) error {
	if len(props) == 0 {
		return nil
	}
	trimmed := make(Properties, len(props))
	for _, k := range slices.Sorted(maps.Keys(props)) {
		switch {
		case r.black[k]:
			return &UpdateRefusal{RefusedBlackList, k, "Can not update config in black list (configBlackList)"}
		case r.live[k]:
		case r.noEffect[k]:
			return &UpdateRefusal{RefusedRestart, k, "accepted from config files for Java compatibility, but rocketd has no use for it"}
		case r.known[k]:
			return &UpdateRefusal{RefusedRestart, k, "read only at start: set it in the config file and restart"}
		default:
			return &UpdateRefusal{RefusedUnknown, k, "unknown configuration key"}
		}
		trimmed[k] = strings.TrimSpace(props[k])
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	next := *r.cur.Load()
	if _, err := Bind(trimmed, &next); err != nil {
		return &UpdateRefusal{RefusedValue, strings.Join(slices.Sorted(maps.Keys(trimmed)), ","), err.Error()}
	}
	if err := r.prepare(&next); err != nil {
		return &UpdateRefusal{RefusedValue, strings.Join(slices.Sorted(maps.Keys(trimmed)), ","), err.Error()}
	}
	if r.path != "" {
		if err := UpdatePropertiesFile(r.path, trimmed); err != nil {
			return err
		}
	}
	r.cur.Store(&next)
	r.counter++
	r.stampVersion()
	return nil
}

// propKeys returns the property key of every bindable field of the
// structs the arguments point to (prop tag, else the Go name with a lower
// first letter, as Java's setter names map).
func propKeys(structs ...any) map[string]bool {
	out := map[string]bool{}
	for _, s := range structs {
		t := reflect.TypeOf(s).Elem()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			key, ok := f.Tag.Lookup("prop")
			if !ok {
				key = strings.ToLower(f.Name[:1]) + f.Name[1:]
			}
			if key != "-" {
				out[key] = true
			}
		}
	}
	return out
}

// javaBrokerBlackList are the keys Java's AdminBrokerProcessor refuses
// whatever configBlackList says.
var javaBrokerBlackList = []string{"brokerConfigPath", "rocketmqHome", "configBlackList"}

// javaNamesrvBlackList are the keys Java's DefaultRequestProcessor refuses
// whatever configBlackList says.
var javaNamesrvBlackList = []string{"configBlackList", "configStorePath", "kvConfigPath", "rocketmqHome"}

// NewBrokerRuntime returns the broker's runtime configuration over bc,
// persisting updates to path (see BrokerConfigFile).
func NewBrokerRuntime(bc *BrokerConfig, path string) *Runtime[BrokerConfig] {
	known := propKeys(bc, &bc.TLS, &bc.Auth)
	maps.Copy(known, map[string]bool{"brokerConfigPath": true, "rocketmqHome": true})
	for old := range brokerKeyAliases {
		known[old] = true
	}
	maxSize := bc.MaxMessageSize
	return NewRuntime(bc, RuntimeOptions[BrokerConfig]{
		Live:      BrokerLiveKeys,
		BlackList: append(slices.Clone(javaBrokerBlackList), strings.Split(bc.ConfigBlackList, ";")...),
		Known:     known,
		NoEffect:  noEffectKeys(bc),
		Path:      path,
		Prepare: func(c *BrokerConfig) error {
			c.DefaultMessageRequestMode = strings.ToUpper(c.DefaultMessageRequestMode)
			if err := c.Validate(); err != nil {
				return err
			}
			// The CommitLog sizes its buffers for the size it started
			// with: a larger limit needs a restart.
			if c.MaxMessageSize > maxSize {
				return fmt.Errorf("maxMessageSize %d above %d, the value at start: raising it needs a restart", c.MaxMessageSize, maxSize)
			}
			return nil
		},
	})
}

// NewNamesrvRuntime returns the NameServer's runtime configuration over c,
// persisting updates to path (see NamesrvConfigFile).
func NewNamesrvRuntime(c *NamesrvConfig, path string) *Runtime[NamesrvConfig] {
	known := propKeys(c, &c.TLS, &c.Auth)
	known["rocketmqHome"] = true
	return NewRuntime(c, RuntimeOptions[NamesrvConfig]{
		Live:      NamesrvLiveKeys,
		BlackList: append(slices.Clone(javaNamesrvBlackList), strings.Split(c.ConfigBlackList, ";")...),
		Known:     known,
		Path:      path,
		Prepare:   func(c *NamesrvConfig) error { return c.Validate() },
	})
}

// BrokerLiveKeys are the broker keys that change while it runs; every other
// key is read at start only. Each is read per request from the snapshot.
var BrokerLiveKeys = []LiveKey{
	{"maxMessageSize", "the body size limit of sends (at most the value at start)"},
	{"startAcceptSendRequestTimeStamp", "sends before this time are refused"},
	{"rejectTransactionMessage", "prepared (half) messages are refused"},
	{"enableMixedMessageType", "UPDATE_AND_CREATE_TOPIC's message.type=MIXED"},
	{"timerWheelEnable", "timer messages are accepted"},
	{"timerMaxDelaySec", "the longest timer delay accepted"},
	{"recallMessageEnable", "RECALL_MESSAGE and gRPC RecallMessage are served"},
	{"allowRecallWhenBrokerNotWriteable", "recalls pass while the broker is not writeable"},
	{"litePullMessageEnable", "LITE_PULL_MESSAGE is served"},
	{"slaveReadEnable", "pulls far behind are redirected to a slave"},
	{"enablePropertyFilter", "SQL92 subscriptions are accepted"},
	{"filterSupportRetry", "SQL92 filters judge retry messages"},
	{"useServerSideResetOffset", "how INVOKE_BROKER_TO_RESET_OFFSET reaches consumers"},
	{"serverLoadBalancerEnable", "QUERY_ASSIGNMENT splits queues among clients"},
	{"defaultMessageRequestMode", "the mode of a topic@group without SET_MESSAGE_REQUEST_MODE"},
	{"defaultPopShareQueueNum", "the share number of the default POP mode"},
	{"storeReplyMessageEnable", "replies are stored in <cluster>_REPLY_TOPIC"},
	{"defaultQueryMaxNum", "the default result count of QUERY_MESSAGE"},
}

// NamesrvLiveKeys are the NameServer keys that change while it runs.
var NamesrvLiveKeys = []LiveKey{
	{"orderMessageEnable", "route answers carry orderTopicConf"},
	{"scanNotActiveBrokerInterval", "the period of the broker expiry scan (from the next scan)"},
	{"brokerChannelExpiredTime", "how long a silent broker keeps its routes (from the next scan)"},
}
