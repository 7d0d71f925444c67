package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// consumeOptions are the flags of `consume`.
type consumeOptions struct {
	topic, group, expr string
	queueID            int32
	offset             int64 // -1: not given
	fromBeginning      bool
	count              int64 // 0: no limit
	follow             bool
	batch              int32
	suspend            time.Duration
}

// defaultConsumerGroup pulls for a consume without -g; no offset is
// committed for it.
const defaultConsumerGroup = "rocketctl_consumer"

func newConsumeCommand(c *ctl) *cobra.Command {
	o := consumeOptions{}
	cmd := &cobra.Command{
		Use:   "consume -t T [-q id] [--offset N | --from-beginning] [-g group] [-c count] [--follow]",
		Short: "Pull messages (PULL_MESSAGE) and print them; with -g commit the group's offsets",
		Long: `Pull messages from every readable queue of a topic (or queue -q) and print
msgId, queue, offset, tags, keys, properties and body of each.

Where each queue starts: --offset N; else --from-beginning (the queue's min
offset); else, with -g, the group's committed offset (QUERY_CONSUMER_OFFSET);
else the queue's min offset. With -g the group's offset is committed
(UPDATE_CONSUMER_OFFSET) after each batch, so a second run continues where
this one stopped and 'group progress' shows the lag.

Without --follow the command stops when every queue is read to its end (or
after -c messages); with --follow it long-polls for new messages until -c
messages were printed or it is interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.offset >= 0 && o.fromBeginning {
				return fmt.Errorf("consume: give --offset or --from-beginning, not both")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return c.consume(ctx, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.topic, "topic", "t", "", "topic name")
	f.Int32VarP(&o.queueID, "queue", "q", -1, "only this queue id (default: every readable queue)")
	f.Int64Var(&o.offset, "offset", -1, "start every queue at this offset")
	f.BoolVar(&o.fromBeginning, "from-beginning", false, "start at each queue's min offset (even when the group has an offset)")
	f.StringVarP(&o.group, "group", "g", "", "consumer group: start from and commit its offsets")
	f.Int64VarP(&o.count, "count", "c", 0, "stop after this many messages (0: no limit)")
	f.BoolVar(&o.follow, "follow", false, "keep waiting for new messages (long polling)")
	f.StringVarP(&o.expr, "subscription", "s", "*", "tag expression: * or TagA || TagB")
	f.Int32Var(&o.batch, "batch", 32, "messages per pull")
	f.DurationVar(&o.suspend, "suspend", 15*time.Second, "with --follow, how long the broker may hold a pull")
	_ = cmd.MarkFlagRequired("topic")
	return cmd
}

// consumed is one printed message.
type consumed struct {
	MsgID       string            `json:"msgId"`
	OffsetMsgID string            `json:"offsetMsgId"`
	Topic       string            `json:"topic"`
	Broker      string            `json:"brokerName"`
	QueueID     int32             `json:"queueId"`
	QueueOffset int64             `json:"queueOffset"`
	Tags        string            `json:"tags,omitempty"`
	Keys        string            `json:"keys,omitempty"`
	Properties  map[string]string `json:"properties,omitempty"`
	Born        int64             `json:"bornTimestamp"`
	Stored      int64             `json:"storeTimestamp"`
	// Body is the body in clear (inflated when the client compressed it)
	// when it is UTF-8 text; BodyBase64 holds any other body, byte for
	// byte (JSON strings cannot carry arbitrary bytes).
	Body       string `json:"body"`
	BodyBase64 string `json:"bodyBase64,omitempty"`
	// Compressed names the compression the body was stored with ("zlib",
	// "lz4", "zstd"); empty when it was stored in clear.
	Compressed string `json:"compressed,omitempty"`
}

// consumeRun is the state one consume shares between its queues.
type consumeRun struct {
	c       *ctl
	o       consumeOptions
	group   string
	tags    map[string]bool // nil: every tag
	printed atomic.Int64
	cancel  context.CancelFunc
	mu      sync.Mutex // serializes output
}

func (c *ctl) consume(ctx context.Context, o consumeOptions) error {
	qs, err := c.readQueues(o.topic, o.queueID)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	run := &consumeRun{c: c, o: o, group: o.group, tags: parseTagExpr(o.expr), cancel: cancel}
	if run.group == "" {
		run.group = defaultConsumerGroup
	}
	starts := make([]int64, len(qs))
	for i, q := range qs {
		if starts[i], err = run.startOffset(q); err != nil {
			return err
		}
	}
	if !o.follow {
		// One queue after the other: the output is in queue order.
		for i, q := range qs {
			if err := run.pullQueue(ctx, q, starts[i]); err != nil || run.done() {
				return ignoreCanceled(err)
			}
		}
		return nil
	}
	// Following: one owned goroutine per queue (a held pull must not keep
	// the other queues waiting); the first failure stops them all.
	var wg sync.WaitGroup
	errs := make([]error, len(qs))
	for i, q := range qs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = run.pullQueue(ctx, q, starts[i]); errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	return ignoreCanceled(errors.Join(errs...))
}

// ignoreCanceled drops the errors of pulls cut short by the count limit or
// an interrupt: both are the normal end of `consume --follow`.
func ignoreCanceled(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func (r *consumeRun) done() bool { return r.o.count > 0 && r.printed.Load() >= r.o.count }

// startOffset decides where a queue is read from (see the command's help).
func (r *consumeRun) startOffset(q queue) (int64, error) {
	switch {
	case r.o.offset >= 0:
		return r.o.offset, nil
	case r.o.fromBeginning || r.o.group == "":
		return r.c.queueOffset(q, r.o.topic, protocol.GetMinOffset)
	}
	off, found, err := r.c.groupOffset(r.o.group, r.o.topic, q)
	if err != nil || found {
		return off, err
	}
	return r.c.queueOffset(q, r.o.topic, protocol.GetMinOffset)
}

// groupOffset is QUERY_CONSUMER_OFFSET; found is false when the group has
// no offset for the queue (QUERY_NOT_FOUND).
func (c *ctl) groupOffset(group, topic string, q queue) (int64, bool, error) {
	h := protocol.QueryConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: q.id, BrokerName: q.broker}
	resp, err := c.invoke(q.addr, protocol.QueryConsumerOffset, protocol.Ext(&h), nil)
	if err != nil {
		return 0, false, fmt.Errorf("offset of %s in %s: %w", group, q, err)
	}
	switch resp.Code {
	case protocol.Success:
		var off protocol.OffsetResponseHeader
		if err := off.Decode(resp.ExtFields); err != nil {
			return 0, false, fmt.Errorf("offset of %s in %s: %w", group, q, err)
		}
		return off.Offset, true, nil
	case protocol.QueryNotFound:
		return -1, false, nil
	}
	return 0, false, &responseError{what: "offset of " + group + " in " + q.String(), code: resp.Code, remark: resp.Remark}
}

// commitOffset is UPDATE_CONSUMER_OFFSET.
func (c *ctl) commitOffset(group, topic string, q queue, offset int64) error {
	h := protocol.UpdateConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: q.id, CommitOffset: offset, BrokerName: q.broker}
	_, err := c.invokeOK("commit offset of "+group+" in "+q.String(), q.addr, protocol.UpdateConsumerOffset, protocol.Ext(&h), nil)
	return err
}

// pullQueue pulls one queue from offset until its end (or, following, until
// ctx ends or the count is reached).
func (r *consumeRun) pullQueue(ctx context.Context, q queue, offset int64) error {
	committed := int64(-1)
	commit := func(to int64) error {
		if r.o.group == "" || to == committed {
			return nil
		}
		committed = to
		return r.c.commitOffset(r.o.group, r.o.topic, q, to)
	}
	sysFlag := protocol.PullFlagSubscription
	suspend := time.Duration(0)
	if r.o.follow {
		sysFlag |= protocol.PullFlagSuspend
		suspend = r.o.suspend
	}
	for !r.done() {
		if err := ctx.Err(); err != nil {
			return err
		}
		h := protocol.PullMessageRequestHeader{ConsumerGroup: r.group, Topic: r.o.topic, QueueID: q.id,
			QueueOffset: offset, MaxMsgNums: r.o.batch, SysFlag: sysFlag, SuspendTimeoutMillis: suspend.Milliseconds(),
			Subscription: r.o.expr, SubVersion: time.Now().UnixMilli(), ExpressionType: "TAG", BrokerName: q.broker}
		resp, err := r.c.pull(ctx, q.addr, protocol.Ext(&h), suspend)
		if err != nil {
			return fmt.Errorf("pull %s at %d: %w", q, offset, err)
		}
		var rh protocol.PullMessageResponseHeader
		decodeErr := rh.Decode(resp.ExtFields)
		switch resp.Code {
		case protocol.Success:
			if decodeErr != nil {
				return fmt.Errorf("pull %s at %d: response header: %w", q, offset, decodeErr)
			}
			next, err := r.printBatch(q, resp.Body, rh.NextBeginOffset)
			if err != nil {
				return fmt.Errorf("pull %s at %d: %w", q, offset, err)
			}
			if next <= offset && !r.done() {
				// FOUND without progress would make this loop spin.
				return fmt.Errorf("pull %s at %d: broker answered FOUND but next offset %d does not advance", q, offset, next)
			}
			offset = next
			if err := commit(offset); err != nil {
				return err
			}
		case protocol.PullNotFound, protocol.PullRetryImmediately, protocol.PullOffsetMoved:
			// Nothing (more) to print here. A moved offset or filtered
			// messages still move the position forward.
			advanced := decodeErr == nil && rh.NextBeginOffset > offset
			if advanced {
				offset = rh.NextBeginOffset
				if err := commit(offset); err != nil {
					return err
				}
			}
			if !r.o.follow && (resp.Code == protocol.PullNotFound || !advanced) {
				return nil
			}
			if r.o.follow && !advanced && resp.Code != protocol.PullNotFound {
				// Retry later rather than spin on a broker that says "again".
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
			}
		default:
			return &responseError{what: fmt.Sprintf("pull %s at %d from %s", q, offset, q.addr), code: resp.Code, remark: resp.Remark}
		}
	}
	return nil
}

// pull sends one PULL_MESSAGE that the broker may hold for suspend.
func (c *ctl) pull(ctx context.Context, addr string, ext map[string]string, suspend time.Duration) (*remoting.Command, error) {
	ctx, cancel := context.WithTimeout(ctx, suspend+c.timeout)
	defer cancel()
	return c.client.Invoke(ctx, addr, remoting.NewRequest(protocol.PullMessage, ext, nil))
}

// printBatch prints the records of a pull body that match the tag
// expression, at most up to the count limit, and returns the offset to pull
// next: next when the whole batch was printed, else the offset after the
// last printed record.
func (r *consumeRun) printBatch(q queue, body []byte, next int64) (int64, error) {
	for len(body) > 0 {
		rec, n, err := message.DecodeRecord(body, false)
		if err != nil {
			return 0, fmt.Errorf("record in pull body: %w", err)
		}
		body = body[n:]
		tag, _ := message.Property(rec.Properties, message.PropertyTags)
		if r.tags != nil && !r.tags[tag] {
			continue // the broker filters by tag hash; two tags may share one
		}
		if r.o.count > 0 && r.printed.Add(1) > r.o.count {
			return rec.QueueOffset, nil
		}
		if err := r.print(q, &rec); err != nil {
			return 0, err
		}
		if r.done() {
			r.cancel()
			return rec.QueueOffset + 1, nil
		}
	}
	return next, nil
}

// parseTagExpr reads a TAG subscription ("*", "", or "A || B"); nil means
// every message.
func parseTagExpr(expr string) map[string]bool {
	expr = strings.TrimSpace(expr)
	if expr == "" || expr == "*" {
		return nil
	}
	tags := map[string]bool{}
	for _, t := range strings.Split(expr, "||") {
		if t = strings.TrimSpace(t); t != "" {
			tags[t] = true
		}
	}
	return tags
}

func (r *consumeRun) print(q queue, rec *message.Record) error {
	props := message.ParseProperties(rec.Properties)
	m := consumed{OffsetMsgID: message.OffsetMsgID(rec.StoreHost, rec.PhysicalOffset), Topic: rec.Topic,
		Broker: q.broker, QueueID: rec.QueueID, QueueOffset: rec.QueueOffset,
		Tags: props[message.PropertyTags], Keys: props[message.PropertyKeys],
		Born: rec.BornTimestamp, Stored: rec.StoreTimestamp}
	body := rec.Body
	if message.IsCompressed(rec.SysFlag) {
		m.Compressed = compressionName(rec.SysFlag)
		clear, err := message.DecompressBody(rec.SysFlag, rec.Body)
		if err != nil {
			return fmt.Errorf("message %s at %s:%d: %w", m.OffsetMsgID, q, rec.QueueOffset, err)
		}
		body = clear
	}
	if utf8.Valid(body) {
		m.Body = string(body)
	} else {
		m.BodyBase64 = base64.StdEncoding.EncodeToString(body)
	}
	m.MsgID = props[message.PropertyUniqClientMessageIDKeyIdx]
	if m.MsgID == "" {
		m.MsgID = m.OffsetMsgID
	}
	delete(props, message.PropertyTags)
	delete(props, message.PropertyKeys)
	delete(props, message.PropertyUniqClientMessageIDKeyIdx)
	m.Properties = props
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.c.json {
		return r.c.writeJSON(m)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "msgId=%s offsetMsgId=%s queue=%s:%d offset=%d", m.MsgID, m.OffsetMsgID, m.Broker, m.QueueID, m.QueueOffset)
	if m.Tags != "" {
		fmt.Fprintf(&b, " tags=%s", m.Tags)
	}
	if m.Keys != "" {
		fmt.Fprintf(&b, " keys=%q", m.Keys)
	}
	if m.Compressed != "" {
		fmt.Fprintf(&b, " compressed=%s", m.Compressed)
	}
	fmt.Fprintf(&b, " stored=%s\n", time.UnixMilli(m.Stored).Format("2006-01-02T15:04:05.000"))
	if len(props) > 0 {
		b.WriteString("  properties:")
		for _, k := range slices.Sorted(maps.Keys(props)) {
			fmt.Fprintf(&b, " %s=%s", k, props[k])
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "  body: %s\n", printableBody(body))
	_, err := fmt.Fprint(r.c.out, b.String())
	return err
}

// compressionName names the body compression of a compressed record.
func compressionName(sysFlag int32) string {
	switch message.CompressionType(sysFlag) {
	case message.CompressionLZ4:
		return "lz4"
	case message.CompressionZSTD:
		return "zstd"
	}
	return "zlib"
}

// printableBody is the body as text when it is printable UTF-8, else quoted
// (bytes escaped), so binary bodies cannot garble the terminal.
func printableBody(body []byte) string {
	if !utf8.Valid(body) {
		return fmt.Sprintf("%q", body)
	}
	for _, r := range string(body) {
		if !unicode.IsPrint(r) && r != '\n' && r != '\t' {
			return fmt.Sprintf("%q", body)
		}
	}
	return string(body)
}
