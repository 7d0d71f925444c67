package processor

import (
	"fmt"
	"github.com/rocketd/rocketd/internal/store"
	"math"
	"strconv"

	"github.com/rocketd/rocketd/internal/broker/stats"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/vfs"
)

// versionDescs are Java's MQVersion.Version names of the versions rocketd
// speaks (MQVersion.getVersionDesc).
var versionDescs = map[int32]string{
	protocol.VersionV4_9_8: "V4_9_8",
	protocol.VersionV5_3_3: "V5_3_3",
}

// Java's defaults of the thread pools rocketd has no queue of its own for:
// lite pulls and END_TRANSACTION share the pull and send queues, and there
// is no POP ack pool.
const (
	javaLitePullQueueCapacity = 100000
	javaAckQueueCapacity      = 100000
)

// brokerAdmin serves the broker-wide admin codes: runtime info and
// statistics, the broker config (read and live update), HA status, the
// timer's checkpoint and metrics, and the delay offsets.
type brokerAdmin struct {
	base
	store           *store.Store
	stats           *stats.Stats
	extras          func(map[string]string) // Deps.RuntimeExtras
	haRuntime       func() protocol.HARuntimeInfo
	timerCheckpoint func() (protocol.TimerCheckpoint, bool)
	timerMetrics    func() (protocol.TimerMetrics, bool)
	fams            Families // the main server's pools: runtime info reads their queue lengths
}

func (ba *brokerAdmin) register(srv *remoting.Server, pools Families) {
	// The main server registers first, the VIP channel's after it (see
	// the broker's wiring): Java's runtime info reports the main
	// server's queues (sendThreadPoolQueueSize ...), not the VIP's.
	if ba.fams == (Families{}) {
		ba.fams = pools
	}
	srv.Handle(protocol.GetBrokerRuntimeInfo, pools.Admin, ba.handleRuntimeInfo)
	srv.Handle(protocol.ViewBrokerStatsData, pools.Admin, ba.handleViewBrokerStats)
	srv.Handle(protocol.GetBrokerConfig, pools.Admin, ba.handleBrokerConfig)
	srv.Handle(protocol.UpdateBrokerConfig, pools.Admin, ba.handleUpdateBrokerConfig)
	srv.Handle(protocol.GetBrokerHAStatus, pools.Admin, ba.handleHAStatus)
	srv.Handle(protocol.GetTimerCheckPoint, pools.Admin, ba.handleTimerCheckPoint)
	srv.Handle(protocol.GetTimerMetrics, pools.Admin, ba.handleTimerMetrics)
	srv.Handle(protocol.GetAllDelayOffset, pools.Admin, ba.handleAllDelayOffset)
}

// handleRuntimeInfo serves GET_BROKER_RUNTIME_INFO (28) with the keys of
// Java 5.x's AdminBrokerProcessor.prepareRuntimeInfo (StoreStatsService,
// DefaultMessageStore, BrokerStats, the thread pools), in Java's formats.
// Keys of what rocketd measures differently are noted in doc.go.
func (ba *brokerAdmin) handleRuntimeInfo(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	return bodyResponse(&protocol.KVTable{Table: ba.runtimeInfo()})
}

func (ba *brokerAdmin) runtimeInfo() map[string]string {
	itoa := func(v int64) string { return strconv.FormatInt(v, 10) }
	utoa := func(v uint64) string { return strconv.FormatUint(v, 10) }
	rt := ba.stats.Runtime()
	disk := ba.store.DiskStatus()
	ratio := strconv.FormatFloat(disk.UsedRatio/100, 'f', -1, 64)
	m := map[string]string{
		// StoreStatsService
		"bootTimestamp":            itoa(rt.BootMillis),
		"runtime":                  rt.Uptime,
		"putMessageTimesTotal":     utoa(rt.PutMessageTimesTotal),
		"putMessageSizeTotal":      utoa(rt.PutMessageSizeTotal),
		"putMessageAverageSize":    stats.JavaDouble(float64(rt.PutMessageSizeTotal) / float64(rt.PutMessageTimesTotal)),
		"putMessageFailedTimes":    utoa(rt.PutMessageFailedTimes),
		"putMessageEntireTimeMax":  itoa(rt.PutMessageEntireTimeMax),
		"putMessageDistributeTime": rt.PutMessageDistributeTime,
		"putLatency99":             rt.PutLatency99,
		"putLatency999":            rt.PutLatency999,
		"getMessageEntireTimeMax":  itoa(rt.GetMessageEntireTimeMax),
		// Java 5.x never raises it from 0 (setDispatchMaxBuffer has no
		// caller); rocketd-exporter fails the whole family set without it.
		"dispatchMaxBuffer": "0",
		"putTps":            rt.PutTps,
		"getFoundTps":       rt.GetFoundTps,
		"getMissTps":        rt.GetMissTps,
		"getTotalTps":       rt.GetTotalTps,
		"getTransferredTps": rt.GetTransferredTps,
		// 4.x tools (mqadmin clusterList 4.9.8) read the old spelling.
		"getTransferedTps": rt.GetTransferredTps,
		// DefaultMessageStore
		"commitLogDiskRatio":                              ratio,
		"commitLogDiskRatio_" + ba.cfg.StorePathCommitLog: ratio,
		"consumeQueueDiskRatio":                           ratio, // one store root
		"commitLogMinOffset":                              itoa(ba.store.CommitLogMinOffset()),
		"commitLogMaxOffset":                              itoa(ba.store.CommitLogMaxOffset()),
		// prepareRuntimeInfo
		"brokerActive":                    strconv.FormatBool(ba.isMaster()),
		"brokerVersionDesc":               versionDescs[remoting.DefaultVersion],
		"brokerVersion":                   strconv.Itoa(int(remoting.DefaultVersion)),
		"msgPutTotalYesterdayMorning":     utoa(rt.PutTotalYesterdayMorning),
		"msgPutTotalTodayMorning":         utoa(rt.PutTotalTodayMorning),
		"msgPutTotalTodayNow":             utoa(rt.PutTotalTodayNow),
		"msgGetTotalYesterdayMorning":     utoa(rt.GetTotalYesterdayMorning),
		"msgGetTotalTodayMorning":         utoa(rt.GetTotalTodayMorning),
		"msgGetTotalTodayNow":             utoa(rt.GetTotalTodayNow),
		"dispatchBehindBytes":             itoa(ba.store.DispatchBehindBytes()),
		"pageCacheLockTimeMills":          "0", // the put lock is never held across I/O
		"earliestMessageTimeStamp":        itoa(ba.store.EarliestStoreTime()),
		"startAcceptSendRequestTimeStamp": itoa(ba.cfg.StartAcceptSendRequestTimeStamp),
		// No transient store pool: Java reports 0 then and no
		// remainHowManyDataToCommit.
		"remainTransientStoreBufferNumbs": "0",
		"remainHowManyDataToFlush":        humanBytes(ba.store.FlushBehindBytes()),
		"brokerRole":                      string(ba.brokerRole()),
		// Java's values with timerWheelEnable=false; the broker's
		// RuntimeExtras sets those of its timer.
		"timerReadBehind":   "0",
		"timerOffsetBehind": "0",
		"timerCongestNum":   "0",
		"timerEnqueueTps":   "0.0",
		"timerDequeueTps":   "0.0",
	}
	if d, err := vfs.Default.DiskUsage(ba.cfg.StorePathRootDir); err == nil {
		m["commitLogDirCapacity"] = fmt.Sprintf("Total : %s, Free : %s.", humanBytes(int64(d.Total)), humanBytes(int64(d.Total-d.Used)))
	}
	queued := func(f interface{ Queued() int }) string {
		if f == nil {
			return "0"
		}
		return strconv.Itoa(f.Queued())
	}
	var send, pull, admin interface{ Queued() int }
	if ba.fams.Send != nil {
		send = ba.fams.Send
	}
	if ba.fams.Pull != nil {
		pull = ba.fams.Pull
	}
	if ba.fams.Admin != nil {
		admin = ba.fams.Admin
	}
	for k, v := range map[string]string{
		"sendThreadPoolQueueSize":               queued(send),
		"sendThreadPoolQueueCapacity":           strconv.Itoa(ba.cfg.SendThreadPoolQueueCapacity),
		"pullThreadPoolQueueSize":               queued(pull),
		"pullThreadPoolQueueCapacity":           strconv.Itoa(ba.cfg.PullThreadPoolQueueCapacity),
		"litePullThreadPoolQueueSize":           queued(pull),
		"litePullThreadPoolQueueCapacity":       strconv.Itoa(javaLitePullQueueCapacity),
		"queryThreadPoolQueueSize":              queued(admin),
		"queryThreadPoolQueueCapacity":          strconv.Itoa(ba.cfg.QueryThreadPoolQueueCapacity),
		"ackThreadPoolQueueSize":                "0",
		"ackThreadPoolQueueCapacity":            strconv.Itoa(javaAckQueueCapacity),
		"EndTransactionQueueSize":               queued(send),
		"EndTransactionThreadPoolQueueCapacity": strconv.Itoa(ba.cfg.EndTransactionPoolQueueCapacity),
		// rocketd's queues do not stamp their requests unless
		// brokerFastFailureEnable drops old ones; none waits long then.
		"sendThreadPoolQueueHeadWaitTimeMills":     "0",
		"pullThreadPoolQueueHeadWaitTimeMills":     "0",
		"queryThreadPoolQueueHeadWaitTimeMills":    "0",
		"litePullThreadPoolQueueHeadWaitTimeMills": "0",
		"ackThreadPoolQueueHeadWaitTimeMills":      "0",
	} {
		m[k] = v
	}
	if ba.extras != nil {
		ba.extras(m)
	}
	return m
}

// humanBytes is Java's MixAll.humanReadableByteCount(bytes, false).
func humanBytes(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	exp := int(math.Log(float64(n)) / math.Log(1024))
	return fmt.Sprintf("%.1f %ciB", float64(n)/math.Pow(1024, float64(exp)), "KMGTPE"[exp-1])
}

// handleViewBrokerStats serves VIEW_BROKER_STATS_DATA (315, mqadmin
// statsAll) as Java's ViewBrokerStatsData: the minute, hour and day
// snapshots of one statistics item (package stats lists the names and
// keys), or SYSTEM_ERROR "The stats <name> <key> not exist".
func (ba *brokerAdmin) handleViewBrokerStats(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if resp := missing(req, "statsName", "statsKey"); resp != nil {
		return resp
	}
	var h protocol.ViewBrokerStatsDataRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	w, found := ba.stats.Item(h.StatsName, h.StatsKey)
	if !found {
		return remoting.NewResponse(protocol.SystemError, fmt.Sprintf("The stats <%s> <%s> not exist", h.StatsName, h.StatsKey))
	}
	item := func(s stats.Snapshot) protocol.BrokerStatsItem {
		return protocol.BrokerStatsItem{Sum: s.Sum, Tps: s.TPS, Avgpt: s.AvgPT}
	}
	return bodyResponse(&protocol.BrokerStatsData{StatsMinute: item(w.Minute), StatsHour: item(w.Hour), StatsDay: item(w.Day)})
}
