package grpc

import (
	"strconv"
	"strings"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
)

// mapProperties is how SendMessage built a message's properties before
// it encoded them directly: through a map, then message.EncodeProperties.
// messageProperties must answer exactly as it.
func mapProperties(s *Server, m *v2.Message, producerGroup string) (map[string]string, *v2.Status) {
	sp := m.GetSystemProperties()
	if max := s.cfg.Broker.MaxMessageSize; max > 0 && len(m.GetBody()) > max {
		return nil, status(v2.Code_MESSAGE_BODY_TOO_LARGE, "message body cannot exceed the max "+strconv.Itoa(max))
	}
	user := m.GetUserProperties()
	if len(user) > userPropertyMaxNum {
		return nil, status(v2.Code_MESSAGE_PROPERTIES_TOO_LARGE, "too many user properties, max is "+strconv.Itoa(userPropertyMaxNum))
	}
	props := make(map[string]string, len(user)+8)
	size := 0
	for k, v := range user {
		if systemProperty(k) {
			return nil, status(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "property is used by system: "+k)
		}
		if hasControl(k) {
			return nil, status(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "the key of property cannot contain control character")
		}
		if hasControl(v) {
			return nil, status(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "the value of property cannot contain control character")
		}
		size += len(k) + len(v)
		props[k] = v
	}
	if tag := sp.GetTag(); tag != "" {
		switch {
		case strings.TrimSpace(tag) == "":
			return nil, status(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot be the char sequence of whitespace")
		case strings.Contains(tag, "|"):
			return nil, status(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot contain '|'")
		case hasControl(tag):
			return nil, status(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot contain control character")
		}
		props[message.PropertyTags] = tag
		size += len(tag)
	}
	for _, k := range sp.GetKeys() {
		if k != "" && strings.TrimSpace(k) == "" {
			return nil, status(v2.Code_ILLEGAL_MESSAGE_KEY, "key cannot be the char sequence of whitespace")
		}
		if hasControl(k) {
			return nil, status(v2.Code_ILLEGAL_MESSAGE_KEY, "key cannot contain control character")
		}
		size += len(k)
	}
	if len(sp.GetKeys()) > 0 {
		props[message.PropertyKeys] = strings.Join(sp.GetKeys(), " ")
	}
	if size > maxUserPropertySize {
		return nil, status(v2.Code_MESSAGE_PROPERTIES_TOO_LARGE, "the total size of user property is too large, max is "+strconv.Itoa(maxUserPropertySize))
	}
	if strings.TrimSpace(sp.GetMessageId()) == "" {
		return nil, status(v2.Code_ILLEGAL_MESSAGE_ID, "message id cannot be empty")
	}
	props[message.PropertyUniqClientMessageIDKeyIdx] = sp.GetMessageId()
	if sp.GetMessageType() == v2.MessageType_TRANSACTION {
		props[message.PropertyTransactionPrepared] = "true"
		if d := sp.GetOrphanedTransactionRecoveryDuration(); d != nil {
			sec := d.GetSeconds()
			if sec > maxTransactionRecovery {
				return nil, status(v2.Code_BAD_REQUEST, "the max transaction recovery time of message is too large, max is "+strconv.Itoa(maxTransactionRecovery))
			}
			props[message.PropertyCheckImmunityTimeInSeconds] = strconv.FormatInt(sec, 10)
		}
	}
	if ts := sp.GetDeliveryTimestamp(); ts != nil {
		at := ts.AsTime()
		if time.Until(at) > maxDelay {
			return nil, status(v2.Code_ILLEGAL_DELIVERY_TIME, "the max delay time of message is too large, max is "+strconv.FormatInt(maxDelay.Milliseconds(), 10))
		}
		props[message.PropertyTimerDeliverMS] = strconv.FormatInt(at.UnixMilli(), 10)
	}
	props[message.PropertyReconsumeTime] = strconv.Itoa(int(sp.GetDeliveryAttempt()))
	props[message.PropertyProducerGroup] = producerGroup
	if g := sp.GetMessageGroup(); g != "" {
		switch {
		case strings.TrimSpace(g) == "":
			return nil, status(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group cannot be the char sequence of whitespace")
		case len(g) >= maxMessageGroupSize:
			return nil, status(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group exceed the max size "+strconv.Itoa(maxMessageGroupSize))
		case hasControl(g):
			return nil, status(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group cannot contain control character")
		}
		props[message.PropertyShardingKey] = g
	}
	if tc := sp.GetTraceContext(); tc != "" {
		props[message.PropertyTraceContext] = tc
	}
	if bh := sp.GetBornHost(); strings.TrimSpace(bh) != "" {
		props[message.PropertyBornHost] = bh
	}
	if bt := sp.GetBornTimestamp(); bt != nil && bt.IsValid() {
		props[message.PropertyBornTimestamp] = strconv.FormatInt(bt.AsTime().UnixMilli(), 10)
	}
	return props, nil
}

// mapKind is the message kind the type check read from that map.
func mapKind(props map[string]string) msgKind {
	has := func(k string) bool { _, ok := props[k]; return ok }
	return msgKind{
		transaction: props[message.PropertyTransactionPrepared] == "true",
		delay: has(message.PropertyDelayTimeLevel) || has(message.PropertyTimerDeliverMS) ||
			has(message.PropertyTimerDelaySec) || has(message.PropertyTimerDelayMS),
		fifo: has(message.PropertyShardingKey),
	}
}

func propsServer() *Server {
	return &Server{cfg: Config{Broker: &config.BrokerConfig{MaxMessageSize: 4 << 20}}}
}

func str(s string) *string { return &s }

// sdkMessage is a message as the Go v5 SDK's producer sends it.
func sdkMessage() *v2.Message {
	return &v2.Message{
		Topic: &v2.Resource{Name: "T"}, Body: make([]byte, 1024),
		SystemProperties: &v2.SystemProperties{
			MessageId: "0100155D0000011B2C0000000000000001", BornTimestamp: timestamppb.Now(),
			BornHost: "host-1", BodyEncoding: v2.Encoding_IDENTITY, MessageType: v2.MessageType_NORMAL,
		},
	}
}

// TestMessagePropertiesAsMap: the direct encoding gives the bytes, the
// kind and the refusals the map did, for every kind of message and the
// user properties that collide with what the server sets.
func TestMessagePropertiesAsMap(t *testing.T) {
	s := propsServer()
	many := map[string]string{}
	for i := range 40 {
		many["user-key-"+strconv.Itoa(i)] = "value-" + strconv.Itoa(i)
	}
	tooMany := map[string]string{}
	for i := range userPropertyMaxNum + 1 {
		tooMany["k"+strconv.Itoa(i)] = "v"
	}
	future := timestamppb.New(time.Now().Add(time.Hour))
	cases := map[string]func(m *v2.Message){
		"sdk":                func(*v2.Message) {},
		"tag":                func(m *v2.Message) { m.SystemProperties.Tag = str("TagA") },
		"one key":            func(m *v2.Message) { m.SystemProperties.Keys = []string{"k1"} },
		"keys":               func(m *v2.Message) { m.SystemProperties.Keys = []string{"k1", "", "k3"} },
		"empty key":          func(m *v2.Message) { m.SystemProperties.Keys = []string{""} },
		"user":               func(m *v2.Message) { m.UserProperties = map[string]string{"a": "1", "zz": "2", "empty": ""} },
		"empty user key":     func(m *v2.Message) { m.UserProperties = map[string]string{"": "x", "b": "y"} },
		"many user":          func(m *v2.Message) { m.UserProperties = many },
		"user sharding key":  func(m *v2.Message) { m.UserProperties = map[string]string{message.PropertyShardingKey: "u"} },
		"empty sharding key": func(m *v2.Message) { m.UserProperties = map[string]string{message.PropertyShardingKey: ""} },
		"user trace context": func(m *v2.Message) { m.UserProperties = map[string]string{message.PropertyTraceContext: "u"} },
		"user immunity": func(m *v2.Message) {
			m.UserProperties = map[string]string{message.PropertyCheckImmunityTimeInSeconds: "9"}
		},
		"delivery attempt":     func(m *v2.Message) { n := int32(123); m.SystemProperties.DeliveryAttempt = &n },
		"no born":              func(m *v2.Message) { m.SystemProperties.BornHost, m.SystemProperties.BornTimestamp = " ", nil },
		"id ends in separator": func(m *v2.Message) { m.SystemProperties.MessageId = "id\x02"; m.SystemProperties.Tag = str("z") },
		"group": func(m *v2.Message) {
			m.SystemProperties.MessageGroup = str("order-1")
			m.UserProperties = map[string]string{message.PropertyShardingKey: "u"}
		},
		"trace": func(m *v2.Message) {
			m.SystemProperties.TraceContext = str("00-trace")
			m.UserProperties = map[string]string{message.PropertyTraceContext: "u"}
		},
		"transaction": func(m *v2.Message) {
			m.SystemProperties.MessageType = v2.MessageType_TRANSACTION
			m.SystemProperties.OrphanedTransactionRecoveryDuration = durationpb.New(30 * time.Second)
			m.UserProperties = map[string]string{message.PropertyCheckImmunityTimeInSeconds: "9"}
		},
		"transaction, no recovery": func(m *v2.Message) { m.SystemProperties.MessageType = v2.MessageType_TRANSACTION },
		"delay":                    func(m *v2.Message) { m.SystemProperties.DeliveryTimestamp = future },
		// refusals
		"too large body": func(m *v2.Message) { m.Body = make([]byte, 4<<20+1) },
		"too many user":  func(m *v2.Message) { m.UserProperties = tooMany },
		"system key":     func(m *v2.Message) { m.UserProperties = map[string]string{message.PropertyTags: "x"} },
		"control key":    func(m *v2.Message) { m.UserProperties = map[string]string{"a\nb": "x"} },
		"control value":  func(m *v2.Message) { m.UserProperties = map[string]string{"a": "x\ty"} },
		"blank tag":      func(m *v2.Message) { m.SystemProperties.Tag = str("  ") },
		"tag bar":        func(m *v2.Message) { m.SystemProperties.Tag = str("a|b") },
		"blank key":      func(m *v2.Message) { m.SystemProperties.Keys = []string{" "} },
		"too large user": func(m *v2.Message) {
			m.UserProperties = map[string]string{"big": strings.Repeat("x", maxUserPropertySize)}
		},
		"no id": func(m *v2.Message) { m.SystemProperties.MessageId = " " },
		"long recovery": func(m *v2.Message) {
			m.SystemProperties.MessageType = v2.MessageType_TRANSACTION
			m.SystemProperties.OrphanedTransactionRecoveryDuration = durationpb.New(2 * time.Hour)
		},
		"far delay": func(m *v2.Message) {
			m.SystemProperties.DeliveryTimestamp = timestamppb.New(time.Now().Add(48 * time.Hour))
		},
		"blank group": func(m *v2.Message) { m.SystemProperties.MessageGroup = str(" ") },
		"long group":  func(m *v2.Message) { m.SystemProperties.MessageGroup = str(strings.Repeat("g", maxMessageGroupSize)) },
	}
	for name, edit := range cases {
		m := sdkMessage()
		edit(m)
		wantMap, wantSt := mapProperties(s, m, "T")
		got, kind, st := s.messageProperties(m, "T")
		if (st == nil) != (wantSt == nil) || st != nil && (st.Code != wantSt.Code || st.Message != wantSt.Message) {
			t.Errorf("%s: status %v, want %v", name, st, wantSt)
			continue
		}
		if st != nil {
			continue
		}
		if want := message.EncodeProperties(wantMap); got != want {
			t.Errorf("%s: properties\n %q, want\n %q", name, got, want)
		}
		if want := mapKind(wantMap); kind != want {
			t.Errorf("%s: kind %+v, want %+v", name, kind, want)
		}
	}
}

// BenchmarkMessageProperties: a message as the Go SDK sends it, its
// properties built through a map and encoded (map, as before) and
// encoded directly (direct).
func BenchmarkMessageProperties(b *testing.B) {
	s, m := propsServer(), sdkMessage()
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			props, _ := mapProperties(s, m, "T")
			_ = mapKind(props)
			_ = message.EncodeProperties(props)
		}
	})
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _, _ = s.messageProperties(m, "T")
		}
	})
}
