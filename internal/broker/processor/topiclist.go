package processor

import (
	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// handleCreateTopicList serves UPDATE_AND_CREATE_TOPIC_LIST (18, 5.x):
// UPDATE_AND_CREATE_TOPIC for each config of the body, whose attributes
// map is the modification. Every config is checked before any is applied,
// so a refused one (SYSTEM_ERROR with Java's remark) changes nothing.
// Java answers SUCCESS as soon as it meets a config equal to the current
// one, leaving the rest of the list unapplied; rocketd skips that config
// and goes on.
func (t *topicAdmin) handleCreateTopicList(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if len(req.Body) == 0 {
		return remoting.NewResponse(protocol.SystemError, "UPDATE_AND_CREATE_TOPIC_LIST without a body")
	}
	var body protocol.CreateTopicListRequestBody
	if err := protocol.UnmarshalFastJSON(req.Body, &body); err != nil {
		return remoting.ErrorResponse(err)
	}
	type item struct {
		tc      protocol.TopicConfig
		changes []meta.AttributeChange
	}
	items := make([]item, 0, len(body.TopicConfigList))
	seen := make(map[string]bool, len(body.TopicConfigList))
	for _, tc := range body.TopicConfigList {
		if err := meta.ValidateTopic(tc.TopicName); err != nil {
			return remoting.NewResponse(protocol.SystemError, err.Error())
		}
		// Checked against the current table, a second config of the same
		// topic could fail after the first was applied.
		if seen[tc.TopicName] {
			return remoting.NewResponse(protocol.SystemError, "topic "+tc.TopicName+" appears twice in the list")
		}
		seen[tc.TopicName] = true
		if t.topics.IsSystemTopic(tc.TopicName) {
			return remoting.NewResponse(protocol.SystemError, meta.SystemTopicConflictRemark(tc.TopicName))
		}
		changes, err := meta.ChangesFromMap(tc.Attributes)
		if err != nil {
			return remoting.ErrorResponse(err)
		}
		if code, remark := t.checkMixedType(changes); code != protocol.Success {
			return remoting.NewResponse(code, remark)
		}
		if err := t.topics.CheckUpdate(tc, changes); err != nil {
			return remoting.ErrorResponse(err)
		}
		tc.Attributes, tc.Unknown = nil, nil
		items = append(items, item{tc, changes})
	}
	changed := false
	for _, it := range items {
		c, err := t.topics.Update(it.tc, it.changes)
		if err != nil {
			return remoting.ErrorResponse(err)
		}
		changed = changed || c
	}
	if changed {
		t.awaitRegistration("topic list")
	}
	return ok(nil)
}
