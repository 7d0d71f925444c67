package txn

import (
	"bytes"
	"strconv"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/message"
)

// opTag is the TAGS of an op record that settles half messages
// (TransactionalMessageUtil.REMOVETAG).
const opTag = "d"

// opProperties is the property string of every op record.
var opProperties = message.SetProperty(message.SetProperty("", message.PropertyTags, opTag),
	message.PropertyWaitStoreMsgOK, "true")

// opRecord returns the op record settling the half message at halfOffset
// in the half queue (see doc.go).
func (s *Service) opRecord(halfOffset int64, bornMillis int64) message.Record {
	return message.Record{
		Topic:         meta.TransOpHalfTopic,
		QueueID:       0,
		BornTimestamp: bornMillis,
		BornHost:      s.cfg.StoreHost,
		Body:          strconv.AppendInt(nil, halfOffset, 10),
		Properties:    opProperties,
	}
}

// parseOp returns the half offsets an op record settles: none when its tag
// is not "d" or its body holds something other than decimal offsets
// (4.9.8 "17", 5.x "17,18,21,").
func parseOp(props string, body []byte) []int64 {
	if tag, _ := message.Property(props, message.PropertyTags); tag != opTag {
		return nil
	}
	var offs []int64
	for piece := range bytes.SplitSeq(body, []byte{','}) {
		if len(piece) == 0 {
			continue
		}
		v, err := strconv.ParseInt(string(piece), 10, 64)
		if err != nil || v < 0 {
			return nil
		}
		offs = append(offs, v)
	}
	return offs
}
