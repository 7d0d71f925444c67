package broker

import (
	"fmt"
	"net"
	"strconv"

	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/remoting"
)

// vipListenAddr is where Java's fastRemotingServer (the "VIP channel")
// listens: the main listen address with port-2. Java has no key for it;
// clients derive it from the registered address (MixAll.brokerVIPChannel),
// so nothing is registered. A port below 0 becomes 0, as Java clamps it:
// a main port of 0 (tests) gives an ephemeral VIP port, which no client
// derives but which never collides either.
func vipListenAddr(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("broker: listen address %q: %w", listen, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", fmt.Errorf("broker: listen port %q: %w", port, err)
	}
	return net.JoinHostPort(host, strconv.Itoa(max(p-2, 0))), nil
}

// newFamilies creates srv's processor families with broker.conf's sizes.
// The VIP server serves no pulls: its Pull family is its Admin one, which
// only ever sees the pull codes' REQUEST_CODE_NOT_SUPPORTED.
func newFamilies(srv *remoting.Server, bc *config.BrokerConfig, vip bool) processor.Families {
	f := processor.Families{
		Send:   srv.NewFamily("send", sendWorkers(bc), bc.SendThreadPoolQueueCapacity),
		Offset: srv.NewFamily("consumerManage", bc.ConsumerManageThreadPoolNums, bc.ConsumerManagerThreadPoolQueue),
		Client: srv.NewFamily("heartbeat", bc.HeartbeatThreadPoolNums, bc.HeartbeatThreadPoolQueueCap),
		Admin:  srv.NewFamily("admin", bc.AdminBrokerThreadPoolNums, bc.ClientManagerThreadPoolQueueCap),
		Reply:  srv.NewFamily("reply", bc.ProcessReplyMessageThreadPoolNums, bc.ReplyThreadPoolQueueCapacity),
	}
	if vip {
		f.Pull = f.Admin
	} else {
		f.Pull = srv.NewFamily("pull", bc.PullMessageThreadPoolNums, bc.PullThreadPoolQueueCapacity)
	}
	if bc.BrokerFastFailureEnable {
		f.Send.SetMaxQueueWait(bc.WaitTimeInSendQueue)
		if !vip {
			f.Pull.SetMaxQueueWait(bc.WaitTimeInPullQueue)
		}
	}
	return f
}

// minSendWorkers is the least number of send workers. Java answers a send
// from a future completed by the store (or the HA service), releasing its
// send thread at once; here the worker waits: for the write of the record
// (every put: an unwritten record may still be taken back, see
// commitlog's Failures), for the group-commit fdatasync (SYNC_FLUSH) or the
// slave's ack (SYNC_MASTER). So the pool must cover the sends in flight
// during one such wait, or throughput collapses to workers/wait
// (BenchmarkBrokerProduce64: SYNC_MASTER at 23% of ASYNC_MASTER with the
// default 2 workers on 2 CPUs; a SYNC_FLUSH broker made one fsync per 2
// messages, ~2k msgs/s at 64 producers).
const minSendWorkers = 128

// sendWorkers is the send family's worker count.
func sendWorkers(bc *config.BrokerConfig) int {
	return max(bc.SendMessageThreadPoolNums, minSendWorkers)
}
