package processor

import (
	"errors"
	"hash/crc32"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/vfs"
)

// The master's side of the slave's metadata copy (rocketmq-spec.md §12.1):
// GET_ALL_TOPIC_CONFIG, GET_ALL_CONSUMER_OFFSET,
// GET_ALL_SUBSCRIPTIONGROUP_CONFIG and GET_ALL_DELAY_OFFSET. Each answers
// the table as it is now (mqadmin uses the first three too). A rocketd
// slave polls every 500 ms with the version it holds
// (protocol.SlaveSyncRequestHeader); the answer then says which version it
// reflects and, when the slave is current, is empty (offsets: only what
// changed), so the poll costs a round trip and no table encoding. A
// request without the version (Java's slave, mqadmin) gets the full table.

// handleAllTopicConfig serves GET_ALL_TOPIC_CONFIG.
func (t *topicAdmin) handleAllTopicConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.SlaveSyncRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	// The static topics' mappings ride along (Java 5.x's
	// TopicConfigAndMappingSerializeWrapper): the version a slave holds
	// counts their changes too (both counters only grow).
	v := t.topics.DataVersion()
	var mv protocol.DataVersion
	if t.mappings != nil {
		mv = t.mappings.DataVersion()
	}
	if isKnown(&h, v.Timestamp, v.Counter+mv.Counter) {
		return unchanged(v.Timestamp, v.Counter+mv.Counter)
	}
	snap := t.topics.Snapshot()
	if t.mappings != nil {
		m := t.mappings.Snapshot()
		snap.TopicQueueMappingDetailMap, snap.MappingDataVersion = m.TopicQueueMappingInfoMap, &m.DataVersion
		mv = m.DataVersion
	}
	return versioned(bodyResponse(&snap), snap.DataVersion.Timestamp, snap.DataVersion.Counter+mv.Counter, false)
}

// handleAllGroups serves GET_ALL_SUBSCRIPTIONGROUP_CONFIG.
func (g *groupAdmin) handleAllGroups(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.SlaveSyncRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if v := g.groups.DataVersion(); isKnown(&h, v.Timestamp, v.Counter) {
		return unchanged(v.Timestamp, v.Counter)
	}
	snap := g.groups.Snapshot()
	return versioned(bodyResponse(&snap), snap.DataVersion.Timestamp, snap.DataVersion.Counter, false)
}

// handleAllConsumerOffset serves GET_ALL_CONSUMER_OFFSET. Offsets change
// with every commit, so a slave that holds a version of this open table
// gets the keys changed since (meta.Offsets.SnapshotSince), not the table.
// The body carries a dataVersion (ms at open, change count): Java 5.x's
// slave assigns it to its own table and fails on a body without one.
func (ca *consumerAdmin) handleAllConsumerOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.SlaveSyncRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	since := meta.OffsetsVersion{Epoch: -1}
	if stamp, count, ok := h.Known(); ok {
		since = meta.OffsetsVersion{Epoch: stamp, Changes: uint64(count)}
	}
	snap, v, delta := ca.offsets.SnapshotSince(since)
	if delta && len(snap.OffsetTable) == 0 {
		return unchanged(v.Epoch, int64(v.Changes))
	}
	snap.DataVersion = &protocol.DataVersion{Timestamp: v.Epoch / int64(time.Millisecond), Counter: int64(v.Changes)}
	return versioned(bodyResponse(&snap), v.Epoch, int64(v.Changes), delta)
}

// handleAllDelayOffset serves GET_ALL_DELAY_OFFSET. Like Java's
// AdminBrokerProcessor it answers the text of config/delayOffset.json as
// persisted (the schedule service owns the table and writes the file);
// SYSTEM_ERROR when there is none. Its version is the text's CRC32.
func (ba *brokerAdmin) handleAllDelayOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.SlaveSyncRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	name := filepath.Join(meta.ConfigDir(ba.cfg.StorePathRootDir), meta.DelayOffsetFile)
	data, err := vfs.ReadFile(vfs.Default, name)
	switch {
	case errors.Is(err, fs.ErrNotExist) || err == nil && len(data) == 0:
		return remoting.NewResponse(protocol.SystemError, "No delay offset in this broker")
	case err != nil:
		return remoting.ErrorResponse(err)
	}
	sum := int64(crc32.ChecksumIEEE(data))
	if isKnown(&h, 0, sum) {
		return unchanged(0, sum)
	}
	resp := remoting.NewResponse(protocol.Success, "")
	resp.Body = data
	return versioned(resp, 0, sum, false)
}

// isKnown reports whether the slave holds version (stamp, count).
func isKnown(h *protocol.SlaveSyncRequestHeader, stamp, count int64) bool {
	s, c, ok := h.Known()
	return ok && s == stamp && c == count
}

// unchanged is the empty answer to a slave that holds the current version.
func unchanged(stamp, count int64) *remoting.Command {
	resp := remoting.NewResponse(protocol.Success, "")
	h := protocol.SlaveSyncResponseHeader{Stamp: protocol.Some(stamp), Count: protocol.Some(count), Unchanged: protocol.Some(true)}
	resp.ExtFields = protocol.Ext(&h)
	return resp
}

// versioned adds the version a SUCCESS answer reflects (delta: the body
// holds only the changes since the slave's version).
func versioned(resp *remoting.Command, stamp, count int64, delta bool) *remoting.Command {
	if resp.Code != protocol.Success {
		return resp
	}
	h := protocol.SlaveSyncResponseHeader{Stamp: protocol.Some(stamp), Count: protocol.Some(count)}
	if delta {
		h.Delta = protocol.Some(true)
	}
	if resp.ExtFields == nil {
		resp.ExtFields = map[string]string{}
	}
	h.AppendExt(resp.ExtFields)
	return resp
}
