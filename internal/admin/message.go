package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
)

// Message is one stored message as a console shows it.
type Message struct {
	Topic           string            `json:"topic"`
	MsgID           string            `json:"msgId"`   // offset message id (store host + CommitLog offset)
	UniqKey         string            `json:"uniqKey"` // the client's message id (UNIQ_KEY)
	Tags            string            `json:"tags"`
	Keys            string            `json:"keys"`
	Broker          string            `json:"broker"`
	QueueID         int32             `json:"queueId"`
	QueueOffset     int64             `json:"queueOffset"`
	CommitLogOffset int64             `json:"commitLogOffset"`
	BornTimestamp   int64             `json:"bornTimestamp"`
	StoreTimestamp  int64             `json:"storeTimestamp"`
	BornHost        string            `json:"bornHost"`
	StoreHost       string            `json:"storeHost"`
	ReconsumeTimes  int32             `json:"reconsumeTimes"`
	SysFlag         int32             `json:"sysFlag"`
	Compressed      bool              `json:"compressed"`
	Properties      map[string]string `json:"properties"`
	// Body is the body in clear (inflated when the compressed flag is
	// set); BodyError says why it could not be inflated (Body is then the
	// stored bytes).
	Body      []byte `json:"-"`
	BodyError string `json:"bodyError,omitempty"`
}

// newMessage converts a decoded record of broker.
func newMessage(broker string, rec *message.Record) *Message {
	m := &Message{
		Topic: rec.Topic, MsgID: message.OffsetMsgID(rec.StoreHost, rec.PhysicalOffset),
		Broker: broker, QueueID: rec.QueueID, QueueOffset: rec.QueueOffset, CommitLogOffset: rec.PhysicalOffset,
		BornTimestamp: rec.BornTimestamp, StoreTimestamp: rec.StoreTimestamp,
		BornHost: rec.BornHost.String(), StoreHost: rec.StoreHost.String(),
		ReconsumeTimes: rec.ReconsumeTimes, SysFlag: rec.SysFlag, Compressed: message.IsCompressed(rec.SysFlag),
		Properties: message.ParseProperties(rec.Properties),
	}
	m.UniqKey = m.Properties[message.PropertyUniqClientMessageIDKeyIdx]
	m.Tags = m.Properties[message.PropertyTags]
	m.Keys = m.Properties[message.PropertyKeys]
	body, err := message.DecompressBody(rec.SysFlag, rec.Body)
	if err != nil {
		m.Body, m.BodyError = rec.Body, err.Error()
	} else {
		m.Body = body
	}
	return m
}

// decodeRecords decodes a body of stored records (QUERY_MESSAGE,
// VIEW_MESSAGE_BY_ID).
func decodeRecords(broker, addr string, body []byte) ([]*Message, error) {
	var out []*Message
	for b := body; len(b) > 0; {
		rec, n, err := message.DecodeRecord(b, false)
		if err != nil {
			return out, fmt.Errorf("admin: record %d from %s: %w", len(out), addr, err)
		}
		b = b[n:]
		out = append(out, newMessage(broker, &rec))
	}
	return out, nil
}

// viewAt reads the record at a CommitLog offset of the broker at addr.
func (c *Client) viewAt(ctx context.Context, b Broker, offset int64) (*Message, error) {
	h := protocol.ViewMessageRequestHeader{Offset: offset}
	resp, err := c.invokeOK(ctx, "VIEW_MESSAGE_BY_ID", b.Addr, protocol.ViewMessageByID, protocol.Ext(&h), nil)
	if err != nil {
		return nil, err
	}
	msgs, err := decodeRecords(b.Name, b.Addr, resp.Body)
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, &StatusError{Op: "VIEW_MESSAGE_BY_ID", Addr: b.Addr, Code: protocol.NoMessage, Remark: "empty answer"}
	}
	return msgs[0], nil
}

// brokerOfMsgID returns the master of topic's route whose address is the
// store host an offset message id names.
func (c *Client) brokerOfMsgID(ctx context.Context, topic, msgID string) (string, error) {
	b, _, err := c.brokerAndOffset(ctx, topic, msgID)
	if err != nil {
		return "", err
	}
	return b.Addr, nil
}

// errNotOffsetID: the id does not name a broker of the route.
var errNotOffsetID = errors.New("admin: not an offset message id of this topic's brokers")

func (c *Client) brokerAndOffset(ctx context.Context, topic, msgID string) (Broker, int64, error) {
	store, offset, err := message.ParseOffsetMsgID(msgID)
	if err != nil {
		return Broker{}, 0, fmt.Errorf("%w: %w", errNotOffsetID, err)
	}
	r, err := c.TopicRoute(ctx, topic)
	if err != nil {
		return Broker{}, 0, err
	}
	for _, b := range routeMasters(r) {
		if b.Addr == store.String() {
			return b, offset, nil
		}
	}
	return Broker{}, 0, fmt.Errorf("%w: store host %s", errNotOffsetID, store)
}

// ViewMessage looks a message of topic up by id: an offset message id is
// read where it was stored (VIEW_MESSAGE_BY_ID), anything else (or an id
// no broker of the route stored) is taken as the client's message id
// (UNIQ_KEY) and queried on every master, as Java's viewMessage does.
func (c *Client) ViewMessage(ctx context.Context, topic, msgID string) (*Message, error) {
	b, offset, err := c.brokerAndOffset(ctx, topic, msgID)
	if err == nil {
		m, verr := c.viewAt(ctx, b, offset)
		if verr == nil {
			return m, nil
		}
		err = verr
	} else if !errors.Is(err, errNotOffsetID) {
		return nil, err
	}
	msgs, qerr := c.query(ctx, topic, msgID, true)
	if qerr != nil {
		return nil, errors.Join(err, qerr)
	}
	if len(msgs) == 0 {
		return nil, &StatusError{Op: "VIEW_MESSAGE", Addr: topic, Code: protocol.QueryNotFound, Remark: "no message " + msgID + " in topic " + topic}
	}
	return msgs[0], nil
}

// QueryMessageByKey returns the messages of topic carrying key among their
// KEYS, from every master (at most 64 per broker, the index's batch).
func (c *Client) QueryMessageByKey(ctx context.Context, topic, key string) ([]*Message, error) {
	return c.query(ctx, topic, key, false)
}

// queryMaxNum is the dashboard's QUERY_MESSAGE_MAX_NUM (the store's
// maxMsgsNumBatch).
const queryMaxNum = 64

func (c *Client) query(ctx context.Context, topic, key string, unique bool) ([]*Message, error) {
	r, err := c.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	h := protocol.QueryMessageRequestHeader{Topic: topic, Key: key, MaxNum: queryMaxNum,
		BeginTimestamp: 0, EndTimestamp: 1<<63 - 1, UniqueKeyQuery: unique}
	var out []*Message
	var errs []error
	for _, b := range routeMasters(r) {
		resp, err := c.invoke(ctx, b.Addr, protocol.QueryMessage, protocol.Ext(&h), nil)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if resp.Code == protocol.QueryNotFound {
			continue
		}
		if resp.Code != protocol.Success {
			errs = append(errs, &StatusError{Op: "QUERY_MESSAGE", Addr: b.Addr, Code: resp.Code, Remark: resp.Remark})
			continue
		}
		msgs, err := decodeRecords(b.Name, b.Addr, resp.Body)
		if err != nil {
			errs = append(errs, err)
		}
		for _, m := range msgs {
			// The index answers hash hits: keep the records that carry
			// the key itself (Java's client filters the same way).
			if unique && m.UniqKey == key || !unique && m.Topic == topic && slices.Contains(strings.Split(m.Keys, message.KeySeparator), key) {
				out = append(out, m)
			}
		}
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(out, func(a, b *Message) int {
		if a.StoreTimestamp != b.StoreTimestamp {
			if a.StoreTimestamp < b.StoreTimestamp {
				return -1
			}
			return 1
		}
		return strings.Compare(a.MsgID, b.MsgID)
	})
	return out, nil
}

// MessageAt returns the message at offset of queue queueID of topic on
// broker (a broker name of the route).
func (c *Client) MessageAt(ctx context.Context, topic, broker string, queueID int32, offset int64) (*Message, error) {
	msgs, err := c.QueueMessages(ctx, topic, broker, queueID, offset, 1)
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, &StatusError{Op: "QUERY_CONSUME_QUEUE", Addr: broker, Code: protocol.NoMessage,
			Remark: fmt.Sprintf("no message at offset %d of %s queue %d on %s", offset, topic, queueID, broker)}
	}
	return msgs[0], nil
}

// maxQueueMessages bounds one QueueMessages call.
const maxQueueMessages = 100

// QueueMessages returns up to count (at most 100) messages of a queue from
// offset on: the ConsumeQueue units (QUERY_CONSUME_QUEUE), each read by
// its CommitLog offset. broker "" means the only master of the route.
func (c *Client) QueueMessages(ctx context.Context, topic, broker string, queueID int32, offset int64, count int32) ([]*Message, error) {
	r, err := c.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	masters := routeMasters(r)
	var b Broker
	for _, m := range masters {
		if m.Name == broker || broker == "" && len(masters) == 1 {
			b = m
		}
	}
	if b.Addr == "" {
		return nil, fmt.Errorf("admin: topic %s has no master broker named %q", topic, broker)
	}
	count = min(max(count, 1), maxQueueMessages)
	h := protocol.QueryConsumeQueueRequestHeader{Topic: topic, QueueID: queueID, Index: offset, Count: count}
	var body protocol.QueryConsumeQueueResponseBody
	if err := c.invokeJSON(ctx, "QUERY_CONSUME_QUEUE", b.Addr, protocol.QueryConsumeQueue, protocol.Ext(&h), &body); err != nil {
		return nil, err
	}
	out := make([]*Message, 0, len(body.QueueData))
	for _, u := range body.QueueData {
		m, err := c.viewAt(ctx, b, u.PhysicOffset)
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, nil
}
