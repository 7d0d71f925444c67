package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/proc"
)

// TestBrokerCorruptCommitLog is issue 12's report end to end: a flipped
// byte in a middle CommitLog segment after a clean stop. The broker exits
// non-zero with an error naming the file, the offset and the broker.conf
// key (no panic); with commitLogCorruptionAction=truncate it starts with
// the log cut there, logged at Error, and serves the messages before it.
func TestBrokerCorruptCommitLog(t *testing.T) {
	bin := buildRocketd(t)
	port := proc.FreeBrokerPort(t)
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	conf := filepath.Join(dir, "broker.conf")
	text := "brokerClusterName=C1\nbrokerName=b1\nbrokerIP1=127.0.0.1\nlistenPort=" + strconv.Itoa(port) +
		"\nstorePathRootDir=" + store + "\nmapedFileSizeCommitLog=1048576\nflushDiskType=SYNC_FLUSH\n" +
		"defaultTopicQueueNums=1\ngrpcServerPort=" + strconv.Itoa(proc.FreePort(t)) + "\nhaListenPort=" + strconv.Itoa(proc.FreePort(t)) + "\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p := proc.Start(t, bin, "broker", "-c", conf)
	p.WaitLog(t, "broker ready", 15*time.Second)
	c := remoting.NewClient(remoting.ClientConfig{})
	defer c.Close()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	const segSize = 1 << 20
	var offsets []int64 // CommitLog offset of each acknowledged message
	for i := 0; len(offsets) == 0 || offsets[len(offsets)-1] < 2*segSize+segSize/2; i++ {
		h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "T", DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 1, QueueID: 0, BornTimestamp: time.Now().UnixMilli()}
		req := remoting.NewRequest(protocol.SendMessage, protocol.Ext(&h), bytes.Repeat([]byte{byte(i)}, 64<<10))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		r, err := c.Invoke(ctx, addr, req)
		cancel()
		if err != nil || r.Code != protocol.Success {
			t.Fatalf("send %d: %v %+v", i, err, r)
		}
		_, off, err := message.ParseOffsetMsgID(r.ExtFields["msgId"])
		if err != nil {
			t.Fatalf("msgId %q: %v", r.ExtFields["msgId"], err)
		}
		offsets = append(offsets, off)
	}
	c.CloseConn(addr)
	stopGracefully(t, p)

	// Flip one bit inside the body of the first record of segment 1 (of 0-2).
	seg1 := filepath.Join(store, "commitlog", "00000000000001048576")
	f, err := os.OpenFile(seg1, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, 30000); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x04
	if _, err := f.WriteAt(b, 30000); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()

	p = proc.Start(t, bin, "broker", "-c", conf)
	select {
	case <-p.Exited():
	case <-time.After(30 * time.Second):
		t.Fatalf("broker did not exit on a corrupt CommitLog:\n%s", p.Log())
	}
	log := p.Log()
	if p.Err() == nil || strings.Contains(log, "panic") || strings.Contains(log, "goroutine ") {
		t.Fatalf("exit %v, want a non-zero exit without a panic:\n%s", p.Err(), log)
	}
	for _, want := range []string{"rocketd:", "corrupt record at offset " + strconv.Itoa(segSize), seg1,
		"commitLogCorruptionAction=truncate", "level=ERROR"} {
		if !strings.Contains(log, want) {
			t.Fatalf("no %q in the output:\n%s", want, log)
		}
	}

	// The explicit option starts it with the log cut at segment 1.
	if err := os.WriteFile(conf, []byte(text+"commitLogCorruptionAction=truncate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p = proc.Start(t, bin, "broker", "-c", conf)
	p.WaitLog(t, "broker ready", 15*time.Second)
	if !strings.Contains(p.Log(), "truncating as configured") {
		t.Fatalf("truncation not logged:\n%s", p.Log())
	}
	kept := 0
	for _, off := range offsets {
		if off < segSize {
			kept++
		}
	}
	r := invoke(t, c, addr, protocol.GetMaxOffset, protocol.Ext(&protocol.QueueRequestHeader{Topic: "T", QueueID: 0}))
	var mh protocol.OffsetResponseHeader
	if err := mh.Decode(r.ExtFields); r.Code != protocol.Success || err != nil || mh.Offset != int64(kept) {
		t.Fatalf("max offset after truncate: %d %s %v: %d, want %d of %d", r.Code, r.Remark, err, mh.Offset, kept, len(offsets))
	}
	c.CloseConn(addr)
	stopGracefully(t, p)
}
