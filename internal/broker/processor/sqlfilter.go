package processor

import (
	"strings"
	"sync"

	"github.com/rocketd/rocketd/internal/broker/client"
	"github.com/rocketd/rocketd/internal/broker/filter"
	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// handleCheckClientConfig serves CHECK_CLIENT_CONFIG as Java's
// ClientManageProcessor.checkClientConfig: SUCCESS for a TAG subscription
// or none; SYSTEM_ERROR when enablePropertyFilter is off; else the
// expression is compiled and a failure answers SUBSCRIPTION_PARSE_FAILED
// with the compiler's message.
func (c *clientFamily) handleCheckClientConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if len(req.Body) == 0 {
		// Java's decode of a missing body throws (SYSTEM_ERROR).
		return remoting.NewResponse(protocol.SystemError, "CHECK_CLIENT_CONFIG without a body")
	}
	var body protocol.CheckClientRequestBody
	if err := protocol.UnmarshalFastJSON(req.Body, &body); err != nil {
		return remoting.ErrorResponse(err)
	}
	sub := body.SubscriptionData
	if sub == nil || client.IsTagType(sub.ExpressionType) {
		return ok(nil)
	}
	if !c.live().EnablePropertyFilter {
		return remoting.NewResponse(protocol.SystemError, "The broker does not support consumer to filter message by "+sub.ExpressionType)
	}
	if _, err := c.filters.exprCache.compile(sub.ExpressionType, sub.SubString); err != nil {
		c.log.Warn("check client config: expression does not compile", "client", body.ClientID,
			"group", body.Group, "expression", sub.SubString, "err", err)
		return remoting.NewResponse(protocol.SubscriptionParseFailed, err.Error())
	}
	return ok(nil)
}

// pullFilter chooses the filter of a pull as Java's PullMessageProcessor:
// a TAG subscription filters by tags; a non-TAG one by the expression the
// pull carries (carried) or the one compiled from the group's heartbeat,
// which must exist and be at least the pull's subVersion; and any non-TAG
// filter needs enablePropertyFilter. A non-Success code is the answer.
//
// Java builds a filter that lets everything through when a carried
// expression does not compile; rocketd answers SUBSCRIPTION_PARSE_FAILED,
// the code Java gives to a carried subscription it cannot build.
func (fs *filters) pullFilter(h *protocol.PullMessageRequestHeader, sub *protocol.SubscriptionData, carried bool) (store.MessageFilter, int32, string) {
	if sub == nil || sub.ClassFilterMode || client.IsTagType(sub.ExpressionType) {
		return newTagFilter(sub), protocol.Success, ""
	}
	disabled := func() (store.MessageFilter, int32, string) {
		return nil, protocol.SystemError, "The broker does not support consumer to filter message by " + sub.ExpressionType
	}
	var expr *filter.Expr
	if carried {
		// Java's FilterAPI.build refuses an empty expression before
		// the enablePropertyFilter check; compiling comes after it.
		if strings.TrimSpace(h.Subscription) == "" {
			return nil, protocol.SubscriptionParseFailed, "parse the consumer's subscription failed"
		}
		if !fs.live().EnablePropertyFilter {
			return disabled()
		}
		e, err := fs.exprCache.compile(sub.ExpressionType, sub.SubString)
		if err != nil {
			return nil, protocol.SubscriptionParseFailed, "parse the consumer's subscription failed"
		}
		expr = e
	} else {
		f, found := fs.clients.FindFilter(h.ConsumerGroup, h.Topic)
		if !found {
			return nil, protocol.FilterDataNotExist, "The broker's consumer filter data is not exist!Your expression may be wrong!"
		}
		if f.ClientVersion < h.SubVersion {
			return nil, protocol.FilterDataNotLatest, "the consumer's consumer filter data not latest"
		}
		expr = f.Expr
	}
	if !fs.live().EnablePropertyFilter {
		return disabled()
	}
	if fs.live().FilterSupportRetry && strings.HasPrefix(h.Topic, meta.RetryGroupTopicPrefix) {
		return &retryFilter{clients: fs.clients, group: strings.TrimPrefix(h.Topic, meta.RetryGroupTopicPrefix)}, protocol.Success, ""
	}
	return sqlFilter{expr}, protocol.Success, ""
}

// sqlFilter is Java's ExpressionMessageFilter for SQL92 without the bloom
// filter (enableCalcFilterBitMap is off by default): the record's
// properties decide. The ConsumeQueue check is cheaper than Java's (which
// passes every unit): an expression that requires TAGS to be one of a few
// values refuses units whose tags code is none of theirs, so the store
// skips reading them and a held pull is not woken by them.
type sqlFilter struct{ expr *filter.Expr }

func (f sqlFilter) MatchTagsCode(code int64) bool { return f.expr.MayMatchTagsCode(code) }

func (f sqlFilter) MatchRecord(record []byte) bool {
	rec, _, err := message.DecodeRecordNoCopy(record, false)
	return err == nil && f.expr.Match(rec.Properties)
}

// retryFilter is Java's ExpressionForRetryMessageFilter (filterSupportRetry
// on, a non-TAG subscription of %RETRY%group): a retried message is judged
// by the group's filter of its original topic (RETRY_TOPIC), and passes
// when that topic has none.
type retryFilter struct {
	clients *client.Registry
	group   string
}

func (*retryFilter) MatchTagsCode(int64) bool { return true }

func (f *retryFilter) MatchRecord(record []byte) bool {
	rec, _, err := message.DecodeRecordNoCopy(record, false)
	if err != nil {
		return false
	}
	realTopic, _ := message.Property(rec.Properties, message.PropertyRetryTopic)
	real, found := f.clients.FindFilter(f.group, realTopic)
	if !found {
		return true
	}
	return real.Expr.Match(rec.Properties)
}

// filters builds a pull's message filter from its subscription (tags,
// SQL92, the retry topic's); the pull and pop families share one, and
// its expression cache with CHECK_CLIENT_CONFIG.
type filters struct {
	base
	clients   *client.Registry // subscriptions registered by heartbeat
	exprCache exprCache
}

// exprCache compiles the expressions pulls carry and CHECK_CLIENT_CONFIG
// asks about, each once while it stays in the cache (Java keeps a
// 100-entry parse cache for the same reason): a pull never compiles per
// message, and a busy consumer not per request either.
type exprCache struct {
	mu      sync.Mutex
	entries map[string]exprResult
}

type exprResult struct {
	expr *filter.Expr
	err  error
}

const exprCacheSize = 100

func (c *exprCache) compile(exprType, expr string) (*filter.Expr, error) {
	key := exprType + "\x00" + expr
	c.mu.Lock()
	r, found := c.entries[key]
	c.mu.Unlock()
	if found {
		return r.expr, r.err
	}
	r.expr, r.err = client.CompileFilter(exprType, expr)
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= exprCacheSize {
		c.entries = make(map[string]exprResult, exprCacheSize)
	}
	c.entries[key] = r
	c.mu.Unlock()
	return r.expr, r.err
}
