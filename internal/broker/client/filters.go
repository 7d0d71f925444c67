package client

import (
	"github.com/rocketd/rocketd/internal/broker/filter"
	"github.com/rocketd/rocketd/internal/protocol"
)

// Filter is the compiled form of a group's non-TAG subscription of a topic
// (Java's ConsumerFilterData): compiled once when a heartbeat brings a new
// subscription version, read by every pull of that version.
type Filter struct {
	Expr *filter.Expr
	// ClientVersion is the subVersion the expression came with; a pull
	// asking for a newer one gets FILTER_DATA_NOT_LATEST.
	ClientVersion int64
}

// IsTagType is Java's ExpressionType.isTagType: no type or TAG.
func IsTagType(expressionType string) bool {
	return expressionType == "" || expressionType == protocol.ExpressionTag
}

// CompileFilter compiles a subscription's expression by its type: SQL92 is
// the only non-TAG type Java's broker knows (FilterFactory).
func CompileFilter(expressionType, expr string) (*filter.Expr, error) {
	if expressionType != protocol.ExpressionSQL92 {
		return nil, errUnknownType{expressionType}
	}
	return filter.Compile(expr)
}

type errUnknownType struct{ t string }

func (e errUnknownType) Error() string { return "no filter for expression type " + e.t }

// filterFailure is a subscription whose expression did not compile; it is
// logged once the registry lock is released.
type filterFailure struct {
	topic, expr string
	err         error
}

// updateFilter keeps g.filters in step with a subscription just stored.
// As Java's FilterDataMapByTopic, an expression that does not compile
// leaves the previous filter in place (a pull of the new version then gets
// FILTER_DATA_NOT_LATEST, or FILTER_DATA_NOT_EXIST when there was none).
func (g *consumerGroup) updateFilter(sub *protocol.SubscriptionData) *filterFailure {
	if IsTagType(sub.ExpressionType) {
		delete(g.filters, sub.Topic)
		return nil
	}
	if f := g.filters[sub.Topic]; f != nil && f.ClientVersion >= sub.SubVersion {
		return nil
	}
	expr, err := CompileFilter(sub.ExpressionType, sub.SubString)
	if err != nil {
		return &filterFailure{topic: sub.Topic, expr: sub.SubString, err: err}
	}
	if g.filters == nil {
		g.filters = make(map[string]*Filter)
	}
	g.filters[sub.Topic] = &Filter{Expr: expr, ClientVersion: sub.SubVersion}
	return nil
}

// FindFilter returns the compiled filter of group's subscription of topic
// (false: none registered, e.g. its expression never compiled).
func (r *Registry) FindFilter(group, topic string) (*Filter, bool) {
	t := &r.consumers
	t.mu.RLock()
	defer t.mu.RUnlock()
	g := t.groups[group]
	if g == nil {
		return nil, false
	}
	f := g.filters[topic]
	return f, f != nil
}
