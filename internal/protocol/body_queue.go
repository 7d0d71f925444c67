package protocol

import (
	"encoding/json"
	"fmt"
)

// MessageQueue identifies one queue of a topic on one broker. It is also a
// map key in several admin bodies, where fastjson writes it as an object in
// key position; MarshalText/UnmarshalText carry it through the tolerant
// reader (which hands such keys over as their JSON text).
type MessageQueue struct {
	Topic      string `json:"topic"`
	BrokerName string `json:"brokerName"`
	QueueID    int32  `json:"queueId"`
}

// MarshalJSON and UnmarshalJSON keep the object form for values:
// encoding/json would otherwise prefer the text methods and use a string.
func (q MessageQueue) MarshalJSON() ([]byte, error) {
	type plain MessageQueue
	return json.Marshal(plain(q))
}

// UnmarshalJSON also accepts a JSON string holding the queue's JSON text:
// that is how a structured map key reaches it when encoding/json routes keys
// through UnmarshalJSON.
func (q *MessageQueue) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		var text string
		if err := json.Unmarshal(data, &text); err != nil {
			return err
		}
		return q.UnmarshalText([]byte(text))
	}
	type plain MessageQueue
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*q = MessageQueue(p)
	return nil
}

// MarshalText returns the queue's compact JSON text.
func (q MessageQueue) MarshalText() ([]byte, error) {
	type plain MessageQueue
	return json.Marshal(plain(q))
}

// UnmarshalText reads the queue from JSON text (a quoted or object key).
func (q *MessageQueue) UnmarshalText(text []byte) error {
	type plain MessageQueue
	var p plain
	if err := UnmarshalFastJSON(text, &p); err != nil {
		return fmt.Errorf("protocol: message queue key %q: %w", text, err)
	}
	*q = MessageQueue(p)
	return nil
}

// LockBatchRequestBody is the body of LOCK_BATCH_MQ (41) and UNLOCK_BATCH_MQ (42).
type LockBatchRequestBody struct {
	ConsumerGroup  string         `json:"consumerGroup"`
	ClientID       string         `json:"clientId"`
	MQSet          []MessageQueue `json:"mqSet"`
	OnlyThisBroker bool           `json:"onlyThisBroker,omitempty"` // 5.x
}

// UnlockBatchRequestBody is the body of UNLOCK_BATCH_MQ (42).
type UnlockBatchRequestBody = LockBatchRequestBody

// LockBatchResponseBody lists the queues the caller holds after LOCK_BATCH_MQ.
type LockBatchResponseBody struct {
	LockOKMQSet []MessageQueue `json:"lockOKMQSet"`
}

// ResetOffsetBody is the RESET_CONSUMER_CLIENT_OFFSET body: queue -> offset.
type ResetOffsetBody struct {
	OffsetTable map[MessageQueue]int64 `json:"offsetTable"`
}
