package protocol

import (
	"errors"
	"fmt"
)

// Server-side rebalance bodies (5.x): QUERY_ASSIGNMENT (400) and
// SET_MESSAGE_REQUEST_MODE (401), and messageRequestMode.json, the table
// the modes are kept in (rocketmq-spec.md has no section yet; the field
// names are Java's QueryAssignmentRequestBody, QueryAssignmentResponseBody,
// MessageQueueAssignment, SetMessageRequestModeRequestBody and
// MessageRequestModeManager).

// MessageRequestMode is how a consumer group reads a topic: PULL (owns its
// queues) or POP (shares them; 5.x).
type MessageRequestMode string

const (
	RequestModePull MessageRequestMode = "PULL"
	RequestModePop  MessageRequestMode = "POP"
)

// Allocation strategy names of QueryAssignmentRequestBody.StrategyName that
// a 5.x broker serves (AllocateMessageQueueStrategy.getName()).
const (
	StrategyAveragely         = "AVG"
	StrategyAveragelyByCircle = "AVG_BY_CIRCLE"
)

// ErrAssignmentBody marks a QUERY_ASSIGNMENT or SET_MESSAGE_REQUEST_MODE
// body that does not decode or misses a required field.
var ErrAssignmentBody = errors.New("protocol: malformed assignment body")

// QueryAssignmentRequestBody is the body of QUERY_ASSIGNMENT (400).
type QueryAssignmentRequestBody struct {
	Topic         string       `json:"topic"`
	ConsumerGroup string       `json:"consumerGroup"`
	ClientID      string       `json:"clientId"`
	StrategyName  string       `json:"strategyName"`
	MessageModel  MessageModel `json:"messageModel"`
}

// MessageQueueAssignment is one queue of a QUERY_ASSIGNMENT answer.
type MessageQueueAssignment struct {
	MessageQueue MessageQueue       `json:"messageQueue"`
	Mode         MessageRequestMode `json:"mode"`
	Attachments  map[string]string  `json:"attachments,omitempty"`
}

// QueryAssignmentResponseBody answers QUERY_ASSIGNMENT. A nil
// MessageQueueAssignments (Java null, left out: the body is {}) tells the
// client to keep what it has ("invalid result"); an empty list, to drop
// all.
type QueryAssignmentResponseBody struct {
	MessageQueueAssignments *[]MessageQueueAssignment `json:"messageQueueAssignments"`
}

// SetMessageRequestModeRequestBody is the body of SET_MESSAGE_REQUEST_MODE
// (401) and an entry of messageRequestMode.json. PopShareQueueNum: a POP
// consumer also reads the queues of that many consumers after it in the
// sorted client id list (<= 0: every consumer reads every queue).
type SetMessageRequestModeRequestBody struct {
	Topic            string             `json:"topic"`
	ConsumerGroup    string             `json:"consumerGroup"`
	Mode             MessageRequestMode `json:"mode"`
	PopShareQueueNum int32              `json:"popShareQueueNum"`
}

// MessageRequestModeTable is messageRequestMode.json: topic -> group ->
// mode.
type MessageRequestModeTable struct {
	MessageRequestModeMap map[string]map[string]SetMessageRequestModeRequestBody `json:"messageRequestModeMap"`
}

// DecodeQueryAssignmentRequestBody reads a QUERY_ASSIGNMENT body. Java
// fails with an exception (answered SYSTEM_ERROR) on a missing body,
// topic or message model; so does this, with ErrAssignmentBody and the
// field named.
func DecodeQueryAssignmentRequestBody(data []byte) (QueryAssignmentRequestBody, error) {
	var b QueryAssignmentRequestBody
	if len(data) == 0 {
		return b, fmt.Errorf("%w: QueryAssignmentRequestBody: no body", ErrAssignmentBody)
	}
	if err := UnmarshalFastJSON(data, &b); err != nil {
		return QueryAssignmentRequestBody{}, fmt.Errorf("%w: QueryAssignmentRequestBody: %w", ErrAssignmentBody, err)
	}
	switch {
	case b.Topic == "":
		return b, fmt.Errorf("%w: QueryAssignmentRequestBody: topic is missing", ErrAssignmentBody)
	case b.ConsumerGroup == "":
		return b, fmt.Errorf("%w: QueryAssignmentRequestBody: consumerGroup is missing", ErrAssignmentBody)
	case b.MessageModel != Clustering && b.MessageModel != Broadcasting:
		return b, fmt.Errorf("%w: QueryAssignmentRequestBody: messageModel %q, want CLUSTERING or BROADCASTING", ErrAssignmentBody, b.MessageModel)
	}
	return b, nil
}

// DecodeSetMessageRequestModeRequestBody reads a SET_MESSAGE_REQUEST_MODE
// body; a missing mode is PULL (Java's field default).
func DecodeSetMessageRequestModeRequestBody(data []byte) (SetMessageRequestModeRequestBody, error) {
	var b SetMessageRequestModeRequestBody
	if len(data) == 0 {
		return b, fmt.Errorf("%w: SetMessageRequestModeRequestBody: no body", ErrAssignmentBody)
	}
	if err := UnmarshalFastJSON(data, &b); err != nil {
		return SetMessageRequestModeRequestBody{}, fmt.Errorf("%w: SetMessageRequestModeRequestBody: %w", ErrAssignmentBody, err)
	}
	if b.Mode == "" {
		b.Mode = RequestModePull
	}
	switch {
	case b.Topic == "":
		return b, fmt.Errorf("%w: SetMessageRequestModeRequestBody: topic is missing", ErrAssignmentBody)
	case b.ConsumerGroup == "":
		return b, fmt.Errorf("%w: SetMessageRequestModeRequestBody: consumerGroup is missing", ErrAssignmentBody)
	case b.Mode != RequestModePull && b.Mode != RequestModePop:
		return b, fmt.Errorf("%w: SetMessageRequestModeRequestBody: mode %q, want PULL or POP", ErrAssignmentBody, b.Mode)
	}
	return b, nil
}
