package processor

import (
	"context"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/vfs"
)

// TestPutResponse: every put status maps to the code Java answers, and a
// stored message's header is present also for the not-durable codes.
func TestPutResponse(t *testing.T) {
	st, err := store.Open(store.Config{Dir: t.TempDir(), SegmentSize: 1 << 20, CQUnitsPerFile: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := config.NewBrokerConfig()
	p := &sendFamily{base: base{cfg: &cfg, rt: config.NewBrokerRuntime(&cfg, "")}, store: st}
	cases := []struct {
		st     store.PutStatus
		code   int32
		header bool
	}{
		{store.PutOK, protocol.Success, true},
		{store.FlushDiskTimeout, protocol.FlushDiskTimeout, true},
		{store.FlushSlaveTimeout, protocol.FlushSlaveTimeout, true},
		{store.SlaveNotAvailable, protocol.SlaveNotAvailable, true},
		{store.CreateMappedFileFailed, protocol.SystemError, false},
		{store.MessageIllegal, protocol.MessageIllegal, false},
		{store.PropertiesSizeExceeded, protocol.MessageIllegal, false},
		{store.ServiceNotAvailable, protocol.ServiceNotAvailable, false},
		{store.OSPageCacheBusy, protocol.SystemError, false},
		{store.UnknownError, protocol.SystemError, false},
		{store.InSyncReplicasNotEnough, protocol.SystemError, false},
	}
	for _, c := range cases {
		resp := remoting.NewResponse(protocol.Success, "")
		resp.ExtFields = map[string]string{"MSG_REGION": "r", "TRACE_ON": "true"}
		resp = p.putResponse(resp, store.PutResult{Status: c.st, MsgID: "ID", QueueOffset: 7}, 3)
		if resp.Code != c.code {
			t.Errorf("%v: code %d, want %d", c.st, resp.Code, c.code)
		}
		_, hasID := resp.ExtFields["msgId"]
		if hasID != c.header || (c.header && (resp.ExtFields["queueId"] != "3" || resp.ExtFields["queueOffset"] != "7")) {
			t.Errorf("%v: ext fields %v", c.st, resp.ExtFields)
		}
		if !c.header && resp.Remark == "" {
			t.Errorf("%v: refusal without a remark", c.st)
		}
		if resp.ExtFields["MSG_REGION"] == "" {
			t.Errorf("%v: MSG_REGION dropped", c.st)
		}
	}
}

func TestPullCode(t *testing.T) {
	cases := []struct {
		st     store.GetStatus
		offset int64
		code   int32
	}{
		{store.Found, 5, protocol.Success},
		{store.NoMatchedMessage, 5, protocol.PullRetryImmediately},
		{store.MessageWasRemoving, 5, protocol.PullRetryImmediately},
		{store.NoMessageInQueue, 0, protocol.PullNotFound},
		{store.NoMessageInQueue, 5, protocol.PullOffsetMoved},
		{store.NoMatchedLogicQueue, 0, protocol.PullNotFound},
		{store.NoMatchedLogicQueue, 5, protocol.PullOffsetMoved},
		{store.OffsetTooSmall, 5, protocol.PullOffsetMoved},
		{store.OffsetOverflowOne, 5, protocol.PullNotFound},
		{store.OffsetOverflowBadly, 5, protocol.PullOffsetMoved},
		{store.OffsetFoundNull, 5, protocol.PullNotFound},
	}
	for _, c := range cases {
		if got := pullCode(c.st, c.offset); got != c.code {
			t.Errorf("%v at %d: %d, want %d", c.st, c.offset, got, c.code)
		}
	}
}

// TestCreateMappedFileFailedRemark: when the next CommitLog segment cannot
// be created because the disk is full, the send remark says so.
func TestCreateMappedFileFailedRemark(t *testing.T) {
	mem := vfs.NewMem()
	mem.SetCapacity(512 << 10) // no room for a 1 MiB zero-filled segment
	st, err := store.Open(store.Config{Dir: "/data", FS: mem, SegmentSize: 1 << 20, CQUnitsPerFile: 100, FlushSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := config.NewBrokerConfig()
	p := &sendFamily{base: base{cfg: &cfg, rt: config.NewBrokerRuntime(&cfg, "")}, store: st}
	res := st.PutMessage(context.Background(), &message.Record{Topic: "T", Body: []byte("x")}, store.PutOptions{})
	if res.Status != store.CreateMappedFileFailed {
		t.Fatalf("put on a full disk: %v", res.Status)
	}
	resp := p.putResponse(remoting.NewResponse(protocol.Success, ""), res, 0)
	if resp.Code != protocol.SystemError || !strings.Contains(resp.Remark, "create mapped file failed") ||
		!strings.Contains(resp.Remark, "disk full") {
		t.Fatalf("response %d %q", resp.Code, resp.Remark)
	}
}
