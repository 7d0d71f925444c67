package processor

import (
	"strings"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
)

// tagFilter is the TAG-type subscription filter of a pull (store.MessageFilter).
//
// The ConsumeQueue holds Java's String.hashCode of each message's TAGS
// (computed by our dispatcher, whoever sent the message). Subscriptions
// arrive with hash codes computed by the client: Java hashes UTF-16 units,
// the Go client hashes UTF-8 bytes (go-client-wire.md §5), so the two differ
// for non-ASCII tags. The cheap unit check therefore accepts a code that is
// the Java hash or the Go hash of a subscribed tag, or one of the codes the
// client sent; the exact TAGS comparison on the record then removes every
// false positive (hash collisions included).
type tagFilter struct {
	all   bool
	codes map[int32]struct{}
	tags  map[string]struct{}
}

// newTagFilter builds the filter of a subscription. A nil subscription, "*"
// or no tags match everything.
func newTagFilter(sub *protocol.SubscriptionData) *tagFilter {
	f := &tagFilter{}
	if sub == nil || sub.ClassFilterMode {
		f.all = true
		return f
	}
	tags := sub.TagsSet
	if len(tags) == 0 {
		tags = splitTags(sub.SubString)
	}
	if len(tags) == 0 {
		f.all = true
		return f
	}
	f.codes = make(map[int32]struct{}, 2*len(tags)+len(sub.CodeSet))
	f.tags = make(map[string]struct{}, len(tags))
	for _, t := range tags {
		if t == "*" {
			f.all = true
			return f
		}
		f.tags[t] = struct{}{}
		f.codes[message.JavaHash(t)] = struct{}{}
		f.codes[goClientHash(t)] = struct{}{}
	}
	for _, c := range sub.CodeSet {
		f.codes[c] = struct{}{}
	}
	return f
}

// MatchTagsCode implements store.MessageFilter on the ConsumeQueue unit.
func (f *tagFilter) MatchTagsCode(tagsCode int64) bool {
	if f.all {
		return true
	}
	_, ok := f.codes[int32(tagsCode)]
	return ok
}

// MatchRecord implements store.MessageFilter: the exact tag check.
func (f *tagFilter) MatchRecord(record []byte) bool {
	if f.all {
		return true
	}
	rec, _, err := message.DecodeRecordNoCopy(record, false)
	if err != nil {
		return false
	}
	tag, _ := message.Property(rec.Properties, message.PropertyTags)
	_, ok := f.tags[tag]
	return ok
}

// splitTags parses a tag expression: tags separated by "||", trimmed,
// blanks dropped; "" and "*" mean all (nil).
func splitTags(expr string) []string {
	expr = strings.TrimSpace(expr)
	if expr == "" || expr == "*" {
		return nil
	}
	var tags []string
	for t := range strings.SplitSeq(expr, "||") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	return tags
}

// subscriptionFromExpr builds the subscription a pull carries itself
// (PullFlagSubscription), as Java's FilterAPI.build does.
func subscriptionFromExpr(topic, expr, exprType string) *protocol.SubscriptionData {
	sub := &protocol.SubscriptionData{Topic: topic, SubString: strings.TrimSpace(expr), ExpressionType: exprType}
	if sub.SubString == "" {
		sub.SubString = "*"
	}
	sub.TagsSet = splitTags(sub.SubString)
	for _, t := range sub.TagsSet {
		sub.CodeSet = append(sub.CodeSet, message.JavaHash(t))
	}
	return sub
}

// goClientHash is the tag hash of rocketmq-client-go (utils.HashString):
// h = 31*h + b over the UTF-8 bytes, int32 wrap-around.
func goClientHash(s string) int32 {
	var h int32
	for i := 0; i < len(s); i++ {
		h = 31*h + int32(s[i])
	}
	return h
}
