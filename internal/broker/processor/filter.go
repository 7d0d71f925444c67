package processor

import (
	"strings"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/store"
)

// newTagFilter builds the TAG-type filter of a pull's subscription. A nil
// subscription, "*" or no tags match everything.
//
// The ConsumeQueue holds Java's String.hashCode of each message's TAGS
// (computed by our dispatcher, whoever sent the message). Subscriptions
// arrive with hash codes computed by the client: Java hashes UTF-16 units,
// the Go client hashes UTF-8 bytes (go-client-wire.md §5), so the two differ
// for non-ASCII tags. The cheap unit check therefore accepts a code that is
// the Java hash or the Go hash of a subscribed tag, or one of the codes the
// client sent; the exact TAGS comparison on the record then removes every
// false positive (hash collisions included).
func newTagFilter(sub *protocol.SubscriptionData) *store.TagFilter {
	if sub == nil || sub.ClassFilterMode {
		return store.NewTagFilter(false)
	}
	tags := sub.TagsSet
	if len(tags) == 0 {
		tags = splitTags(sub.SubString)
	}
	f := store.NewTagFilter(true, tags...)
	for _, t := range tags {
		f.AddCode(goClientHash(t))
	}
	for _, c := range sub.CodeSet {
		f.AddCode(c)
	}
	return f
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
