package meta

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/rocketd/rocketd/internal/protocol"
)

// ErrAttribute marks a topic attribute modification that Java's
// AttributeParser / AttributeUtil refuse; the error text is Java's message,
// which the broker answers as the remark of SYSTEM_ERROR.
var ErrAttribute = errors.New("meta: topic attributes")

// attributeError carries Java's message for a refused modification.
type attributeError struct{ msg string }

func (e *attributeError) Error() string        { return e.msg }
func (e *attributeError) Is(target error) bool { return target == ErrAttribute }

func attrErrorf(format string, args ...any) error {
	return &attributeError{msg: fmt.Sprintf(format, args...)}
}

// attribute is one entry of Java's TopicAttributes.ALL or
// SubscriptionGroupAttributes.ALL.
type attribute struct {
	changeable bool
	// verify returns Java's message for a value the attribute refuses.
	verify func(value string) error
	// unsupported, when set, refuses a value rocketd's store cannot honour
	// (Java would change the storage layout for it).
	unsupported func(value string) error
}

// enumAttribute verifies like Java's EnumAttribute; javaSet is the universe
// as Java's HashSet prints it in the refusal.
func enumAttribute(javaSet string, values ...string) func(string) error {
	return func(v string) error {
		for _, ok := range values {
			if v == ok {
				return nil
			}
		}
		return attrErrorf("value is not in set: %s", javaSet)
	}
}

// topicAttributes are Java 5.x's TopicAttributes.ALL.
var topicAttributes = map[string]attribute{
	protocol.TopicAttrQueueType: {
		changeable: false,
		verify:     enumAttribute("[BatchCQ, SimpleCQ]", "BatchCQ", "SimpleCQ"),
		unsupported: func(v string) error {
			if v != "SimpleCQ" {
				return attrErrorf("queue.type %s is not supported by rocketd: only SimpleCQ", v)
			}
			return nil
		},
	},
	protocol.TopicAttrCleanupPolicy: {
		changeable: false,
		verify:     enumAttribute("[DELETE, COMPACTION]", "DELETE", "COMPACTION"),
		unsupported: func(v string) error {
			if v != "DELETE" {
				return attrErrorf("cleanup.policy %s is not supported by rocketd: only DELETE", v)
			}
			return nil
		},
	},
	protocol.TopicAttrMessageType: {
		changeable: true,
		verify: enumAttribute("[UNSPECIFIED, MIXED, TRANSACTION, FIFO, DELAY, NORMAL]",
			protocol.MessageTypeUnspecified, protocol.MessageTypeNormal, protocol.MessageTypeFIFO,
			protocol.MessageTypeDelay, protocol.MessageTypeTransaction, protocol.MessageTypeMixed),
	},
	// reserve.time is a tiered-store setting; a Java broker without a
	// tiered store keeps it without effect, and so does rocketd.
	protocol.TopicAttrReserveTime: {
		changeable: true,
		verify: func(v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return attrErrorf("For input string: %q", v)
			}
			if n < -1 {
				return attrErrorf("value is not in range(%d, %d)", -1, int64(^uint64(0)>>1))
			}
			return nil
		},
	},
}

// groupAttributes are Java 5.x's SubscriptionGroupAttributes.ALL: none, so
// every group attribute modification is refused.
var groupAttributes = map[string]attribute{}

// AttributeChange is one entry of an attributes modification: "+key=value"
// adds or updates key, "-key" deletes it.
type AttributeChange struct {
	Key    string // as written, with its sign
	Value  string
	Delete bool // written without '='
}

// ParseAttributeChanges parses the attributes field of
// UPDATE_AND_CREATE_TOPIC ("+k1=v1,+k2=v2,-k3") as Java's
// AttributeParser.parseToMap does, refusing what it refuses with its
// messages. Empty text is no change.
func ParseAttributeChanges(text string) ([]AttributeChange, error) {
	if text == "" {
		return nil, nil
	}
	var out []AttributeChange
	seen := map[string]bool{}
	for _, kv := range javaSplit(text, ',') {
		var c AttributeChange
		if strings.Contains(kv, "=") {
			parts := javaSplit(kv, '=')
			if len(parts) < 2 {
				return nil, attrErrorf("add/alter attribute format is wrong: %q has no value", kv)
			}
			c.Key, c.Value = parts[0], parts[1]
			if !strings.Contains(c.Key, "+") {
				return nil, attrErrorf("add/alter attribute format is wrong: %s", c.Key)
			}
		} else {
			c.Key, c.Delete = kv, true
			if !strings.Contains(c.Key, "-") {
				return nil, attrErrorf("delete attribute format is wrong: %s", c.Key)
			}
		}
		if seen[c.Key] {
			return nil, attrErrorf("key duplication: %s", c.Key)
		}
		seen[c.Key] = true
		out = append(out, c)
	}
	return out, nil
}

// javaSplit is Java's String.split with a one-character literal: trailing
// empty strings are removed.
func javaSplit(s string, sep byte) []string {
	parts := strings.Split(s, string(sep))
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// ChangesToText is the attributes text of changes (AttributeParser.parseToString).
func ChangesToText(changes []AttributeChange) string {
	kvs := make([]string, len(changes))
	for i, c := range changes {
		kvs[i] = c.Key
		if c.Value != "" {
			kvs[i] += "=" + c.Value
		}
	}
	return strings.Join(kvs, ",")
}

// AlterTopicAttributes applies changes to a topic's current attributes as
// Java's AttributeUtil.alterCurrentAttributes does with TopicAttributes.ALL:
// on creation only additions are allowed; an unchangeable attribute can
// only be set at creation; deleting needs the key to exist; values are
// verified. On top of Java it refuses attribute values whose storage
// rocketd does not implement. The result is a new map (nil when empty).
func AlterTopicAttributes(create bool, current map[string]string, changes []AttributeChange) (map[string]string, error) {
	return alterAttributes(topicAttributes, create, current, changes)
}

// AlterGroupAttributes is AlterTopicAttributes for a subscription group
// (SubscriptionGroupManager.updateSubscriptionGroupConfig), whose request
// carries the modification as its attributes map ("+key" -> value).
func AlterGroupAttributes(create bool, current, request map[string]string) (map[string]string, error) {
	changes, err := ChangesFromMap(request)
	if err != nil {
		return nil, err
	}
	return alterAttributes(groupAttributes, create, current, changes)
}

// ChangesFromMap is a modification given as a map ("+key" -> value, "-key"
// -> ignored), as the bodies of UPDATE_AND_CREATE_SUBSCRIPTIONGROUP and
// UPDATE_AND_CREATE_TOPIC_LIST carry it, in key order.
func ChangesFromMap(m map[string]string) ([]AttributeChange, error) {
	changes := make([]AttributeChange, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k == "" {
			return nil, attrErrorf("kv string format wrong.")
		}
		changes = append(changes, AttributeChange{Key: k, Value: m[k], Delete: strings.HasPrefix(k, "-")})
	}
	return changes, nil
}

func alterAttributes(all map[string]attribute, create bool, current map[string]string, changes []AttributeChange) (map[string]string, error) {
	type alter struct {
		key, value string
		init, del  bool
	}
	var alters []alter
	seen := map[string]bool{}
	for _, c := range changes {
		realKey := c.Key[1:] // the parser guarantees a sign somewhere, so len >= 1
		if realKey == "" || strings.ContainsAny(realKey, "+-") {
			return nil, attrErrorf("kv string format wrong.")
		}
		if seen[realKey] {
			return nil, attrErrorf("alter duplication key. key: %s", realKey)
		}
		seen[realKey] = true
		switch {
		case create && strings.HasPrefix(c.Key, "+"):
			alters = append(alters, alter{key: realKey, value: c.Value, init: true})
		case create:
			return nil, attrErrorf("only add attribute is supported while creating topic. key: %s", realKey)
		case strings.HasPrefix(c.Key, "+"):
			alters = append(alters, alter{key: realKey, value: c.Value})
		case strings.HasPrefix(c.Key, "-"):
			if _, ok := current[realKey]; !ok {
				return nil, attrErrorf("attempt to delete a nonexistent key: %s", realKey)
			}
			alters = append(alters, alter{key: realKey, del: true})
		default:
			return nil, attrErrorf("wrong format key: %s", realKey)
		}
	}
	for _, a := range alters {
		attr, ok := all[a.key]
		if !ok {
			return nil, attrErrorf("unsupported key: %s", a.key)
		}
		if !a.init && !attr.changeable {
			return nil, attrErrorf("attempt to update an unchangeable attribute. key: %s", a.key)
		}
		if a.del {
			continue
		}
		if err := attr.verify(a.value); err != nil {
			return nil, err
		}
		if attr.unsupported != nil {
			if err := attr.unsupported(a.value); err != nil {
				return nil, err
			}
		}
	}
	final := maps.Clone(current)
	for _, a := range alters {
		if final == nil {
			final = map[string]string{}
		}
		if a.del {
			delete(final, a.key)
		} else {
			final[a.key] = a.value
		}
	}
	if len(final) == 0 {
		return nil, nil
	}
	return final, nil
}
