package timer

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
)

// RecallHandle is Java's RecallMessageHandle.HandleV1: what a producer
// needs to recall a timer message before it is delivered. Its text is the
// URL-safe Base64 (padded) of "v1 <topic> <brokerName> <timestamp>
// <messageId>", the timestamp being the message's TIMER_OUT_MS + 1 (Java
// adds 1 because its TIMER_OUT_MS is rounded down to the timer's
// precision; rocketd's is exact, so the +1 is kept only for the format's
// sake and taken off again by DeliverMs).
type RecallHandle struct {
	Topic      string
	BrokerName string
	// Timestamp is kept as text: Java parses it only when checking it
	// (NumberUtils.toLong, -1 when unparsable).
	Timestamp string
	// MessageID is the message's UNIQ_KEY (the client's message id).
	MessageID string
}

// errBadRecallHandle is DecoderException("recall handle is invalid").
var errBadRecallHandle = errors.New("recall handle is invalid")

// EncodeRecallHandle is HandleV1.buildHandle for a message held until
// deliverMs (its TIMER_OUT_MS).
func EncodeRecallHandle(topic, brokerName string, deliverMs int64, messageID string) string {
	raw := strings.Join([]string{"v1", topic, brokerName, strconv.FormatInt(deliverMs+1, 10), messageID}, " ")
	return base64.URLEncoding.EncodeToString([]byte(raw))
}

// DecodeRecallHandle is RecallMessageHandle.decodeHandle: an empty
// handle, bad Base64, a version other than v1 or fewer than five fields
// are "recall handle is invalid".
func DecodeRecallHandle(handle string) (RecallHandle, error) {
	if handle == "" {
		return RecallHandle{}, errBadRecallHandle
	}
	// Java's URL decoder takes the padding or not.
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(handle, "="))
	if err != nil {
		return RecallHandle{}, errBadRecallHandle
	}
	items := strings.Split(string(raw), " ")
	for len(items) > 0 && items[len(items)-1] == "" {
		items = items[:len(items)-1] // String.split drops trailing empty strings
	}
	if len(items) < 5 || items[0] != "v1" {
		return RecallHandle{}, errBadRecallHandle
	}
	return RecallHandle{Topic: items[1], BrokerName: items[2], Timestamp: items[3], MessageID: items[4]}, nil
}

// TimestampMs is the handle's timestamp, -1 when it does not parse (as
// Java's NumberUtils.toLong(s, -1)).
func (h RecallHandle) TimestampMs() int64 {
	v, err := strconv.ParseInt(h.Timestamp, 10, 64)
	if err != nil {
		return -1
	}
	return v
}

// DeliverMs is the delivery time (TIMER_OUT_MS) of the message the handle
// names.
func (h RecallHandle) DeliverMs() int64 { return h.TimestampMs() - 1 }
