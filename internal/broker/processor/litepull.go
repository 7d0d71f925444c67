package processor

import (
	"fmt"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// handleLitePull serves LITE_PULL_MESSAGE (361), which the 5.x
// DefaultLitePullConsumer sends instead of PULL_MESSAGE (4.9.8 sends
// PULL_MESSAGE with the same flags). Java's PullMessageProcessor serves
// both codes with one method; the lite pull differs only by the client's
// sysFlag (SUSPEND | SUBSCRIPTION | LITE_PULL, never COMMIT_OFFSET: the
// consumer commits with UPDATE_CONSUMER_OFFSET) and by the broker switch
// litePullMessageEnable, checked right after the broker's read permission.
// A held lite pull is woken and re-run like any pull.
func (pl *pullFamily) handleLitePull(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	if pl.brokerReadable() && !pl.live().LitePullMessageEnable {
		return remoting.NewResponse(protocol.NoPermission,
			fmt.Sprintf("the broker[%s] for lite pull consumer is forbidden", pl.cfg.BrokerIP1))
	}
	if key := missingPullField(req.Ext()); key != "" {
		return remoting.NewResponse(protocol.SystemError, "the custom field <"+key+"> is null")
	}
	return pl.pull(conn, req, true)
}

// pullRequiredFields are PullMessageRequestHeader's @CFNotNull fields.
var pullRequiredFields = [...]string{
	"consumerGroup", "topic", "queueId", "queueOffset", "maxMsgNums",
	"sysFlag", "commitOffset", "suspendTimeoutMillis", "subVersion",
}

// missingPullField returns the first required pull header field ext lacks
// ("" if none). Java's fast header decoder leaves such a field null and the
// processor then fails on it (SYSTEM_ERROR); answering so up front, with
// the remark of Java's reflective decoder, says which field it was
// instead of pulling queue 0 from offset 0 for a half-built request.
func missingPullField(ext map[string]string) string {
	for _, k := range pullRequiredFields {
		if _, ok := ext[k]; !ok {
			return k
		}
	}
	if ext["consumerGroup"] == "" {
		return "consumerGroup"
	}
	if ext["topic"] == "" {
		return "topic"
	}
	return ""
}
