package filter

import "github.com/rocketd/rocketd/internal/message"

// requiredTags returns the TAGS values of which the message must carry one
// for node i to be TRUE, or ok=false when i puts no such bound on TAGS:
// TAGS = 'x' and TAGS IN (...) bound it; AND is bounded by either side, OR
// by both (the union). Anything else (NOT, a number, another property) is
// unbounded. A bound is only a necessary condition: Match still decides.
func (e *Expr) requiredTags(i int32) (tags []string, ok bool) {
	n := &e.nodes[i]
	isTags := func(j int32) bool {
		m := &e.nodes[j]
		return m.op == opProp && m.v.s == message.PropertyTags
	}
	isString := func(j int32) bool {
		m := &e.nodes[j]
		return m.op == opConst && m.v.k == kString
	}
	switch n.op {
	case opEq:
		switch {
		case isTags(n.l) && isString(n.r):
			return []string{e.nodes[n.r].v.s}, true
		case isString(n.l) && isTags(n.r):
			return []string{e.nodes[n.l].v.s}, true
		}
	case opIn:
		if !n.not && isTags(n.l) {
			if n.set != nil {
				for s := range n.set {
					tags = append(tags, s)
				}
				return tags, true
			}
			return append(tags, n.in...), true
		}
	case opAnd:
		if tags, ok = e.requiredTags(n.l); ok {
			return tags, true
		}
		return e.requiredTags(n.r)
	case opOr:
		l, lok := e.requiredTags(n.l)
		r, rok := e.requiredTags(n.r)
		if lok && rok {
			return append(l, r...), true
		}
	}
	return nil, false
}

// bindTags records the expression's TAGS bound as ConsumeQueue tags codes
// (Java's String.hashCode, what the dispatcher stores).
func (e *Expr) bindTags() {
	tags, ok := e.requiredTags(e.root)
	if !ok {
		return
	}
	e.tagsBound = true
	for _, t := range tags {
		e.tagCodes = append(e.tagCodes, message.JavaHash(t))
	}
}

// MayMatchTagsCode tells from a ConsumeQueue unit's tags code alone whether
// the message can match: false only when the expression requires TAGS to
// be one of a few values and the code is none of theirs. It lets a pull
// skip reading such records and long polling stay asleep for them.
func (e *Expr) MayMatchTagsCode(tagsCode int64) bool {
	if !e.tagsBound {
		return true
	}
	for _, c := range e.tagCodes {
		if c == int32(tagsCode) {
			return true
		}
	}
	return false
}
