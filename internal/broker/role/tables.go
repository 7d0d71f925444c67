package role

import (
	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/protocol"
)

// Tables are the broker's metadata tables as the role uses them: the
// registration sends the topic table; a slave makes every table equal to
// its master's.
type Tables struct {
	Topics  Topics
	Groups  Groups
	Offsets Offsets
	// Users and ACLs, when set, are copied from the master (nil: not).
	Users Users
	ACLs  ACLs
	// Mappings, when set, are the static topics' mappings the
	// registration carries; a change asks for a registration round.
	Mappings Mappings
	// DelayOffsetPath is delayOffset.json, which a slave copies as text.
	DelayOffsetPath string
	// TimerCheckpointPath is where a slave keeps its master's timer
	// checkpoint (Java's 56-byte GET_TIMER_CHECK_POINT body); "": not
	// copied.
	TimerCheckpointPath string
}

// Topics is the topic table (meta.Topics).
type Topics interface {
	Get(topic string) (protocol.TopicConfig, bool)
	Put(tc protocol.TopicConfig) error
	Delete(topic string) (bool, error)
	Names() []string
	Len() int
	// RegisterSnapshot is the table as REGISTER_BROKER's body carries it.
	RegisterSnapshot(brokerPermission int32) protocol.TopicConfigSerializeWrapper
	// OnChange calls fn (which must not block) after every change.
	OnChange(fn func())
}

// Mappings is the static topics' mapping table (meta.Mappings).
type Mappings interface {
	// RegisterInfos is the mapping info REGISTER_BROKER carries.
	RegisterInfos() map[string]*protocol.TopicQueueMappingInfo
	// OnChange calls fn (which must not block) after every change.
	OnChange(fn func())
	// ReplaceAll makes the table the master's (a slave's copy).
	ReplaceAll(details map[string]*protocol.TopicQueueMappingDetail, version protocol.DataVersion) (bool, error)
}

// Groups is the subscription group table (meta.Groups).
type Groups interface {
	Get(group string) (protocol.SubscriptionGroupConfig, bool)
	Put(cfg protocol.SubscriptionGroupConfig) error
	Delete(group string) (bool, error)
	Names() []string
}

// Offsets is the consumer offset table (meta.Offsets).
type Offsets interface {
	Query(group, topic string, queueID int32) (int64, bool)
	Commit(group, topic string, queueID int32, offset int64)
}

// Users is the user table (auth.Users).
type Users interface {
	Replace(users []auth.User) (changed bool, err error)
}

// ACLs is the ACL table (auth.ACLs).
type ACLs interface {
	Replace(acls []auth.ACL) (changed bool, err error)
}
