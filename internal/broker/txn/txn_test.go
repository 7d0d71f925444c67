package txn

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

func TestPutHalfRewrites(t *testing.T) {
	e := newEnv(t, nil)
	res := e.putHalf("b", "U1")
	e.waitQueue(meta.TransHalfTopic, 0, 1)
	e.waitDispatched()
	if res.QueueOffset != 0 {
		t.Fatalf("half queue offset %d", res.QueueOffset)
	}
	r, buf, err := e.store.LookMessageByOffset(res.WroteOffset)
	must(t, err)
	defer buf.Release()
	if r.Topic != meta.TransHalfTopic || r.QueueID != 0 || message.TransactionType(r.SysFlag) != message.TransactionNotType {
		t.Fatalf("half record: topic %s queue %d sysflag %#x", r.Topic, r.QueueID, r.SysFlag)
	}
	p := message.ParseProperties(r.Properties)
	if p[message.PropertyRealTopic] != "T" || p[message.PropertyRealQueueID] != "3" || p[message.PropertyTransactionPrepared] != "true" {
		t.Fatalf("half properties %v", p)
	}
	if n := e.store.MaxOffset("T", 3); n != 0 {
		t.Fatalf("half message visible in the real queue (%d)", n)
	}
}

func TestEndCommit(t *testing.T) {
	e := newEnv(t, nil)
	res := e.putHalf("b", "U1")
	e.waitDispatched()
	half, buf, err := e.store.LookMessageByOffset(res.WroteOffset)
	must(t, err)
	halfProps := half.Properties
	halfProps = string([]byte(halfProps))
	buf.Release()

	if code, remark := e.end(res.WroteOffset, res.QueueOffset, protocol.TransactionCommitType); code != protocol.Success {
		t.Fatalf("commit: %d %s", code, remark)
	}
	e.waitQueue("T", 3, 1)
	e.waitQueue(meta.TransOpHalfTopic, 0, 1)
	got := e.messages("T", 3)
	if len(got) != 1 || string(got[0].Body) != "b" {
		t.Fatalf("real queue %v", got)
	}
	m := got[0]
	if message.TransactionType(m.SysFlag) != message.TransactionCommitType || m.PreparedTransactionOffset != res.WroteOffset {
		t.Fatalf("committed sysflag %#x prepared offset %d", m.SysFlag, m.PreparedTransactionOffset)
	}
	if m.Properties != halfProps {
		t.Fatalf("committed properties %q, want the half's %q", m.Properties, halfProps)
	}
	if m.BornHost.String() != "10.0.0.1:5000" {
		t.Fatalf("born host %v", m.BornHost)
	}
	ops := e.messages(meta.TransOpHalfTopic, 0)
	if len(ops) != 1 || string(ops[0].Body) != "0" {
		t.Fatalf("op records %v", ops)
	}
	if tag, _ := message.Property(ops[0].Properties, message.PropertyTags); tag != "d" {
		t.Fatalf("op tag %q", tag)
	}

}

func TestEndRollback(t *testing.T) {
	e := newEnv(t, nil)
	res := e.putHalf("b", "U1")
	if code, remark := e.end(res.WroteOffset, res.QueueOffset, protocol.TransactionRollbackType); code != protocol.Success {
		t.Fatalf("rollback: %d %s", code, remark)
	}
	e.waitQueue(meta.TransOpHalfTopic, 0, 1)
	e.waitDispatched()
	if n := e.store.MaxOffset("T", 3); n != 0 {
		t.Fatalf("rolled back message delivered (%d)", n)
	}
	// Settled: a check round does not ask about it.
	e.advance(time.Hour)
	e.round()
	if c := e.prod.take(); len(c) != 0 {
		t.Fatalf("%d checks of a rolled back message", len(c))
	}
}

func TestEndRefusals(t *testing.T) {
	e := newEnv(t, nil)
	res := e.putHalf("b", "U1")
	e.waitDispatched()
	cases := []struct {
		name   string
		h      protocol.EndTransactionRequestHeader
		remark string
	}{
		{"group", protocol.EndTransactionRequestHeader{ProducerGroup: "other", CommitLogOffset: res.WroteOffset, TranStateTableOffset: 0}, remarkGroupWrong},
		{"queue offset", protocol.EndTransactionRequestHeader{ProducerGroup: "pg", CommitLogOffset: res.WroteOffset, TranStateTableOffset: 7}, remarkQueueWrong},
		{"missing", protocol.EndTransactionRequestHeader{ProducerGroup: "pg", CommitLogOffset: 1 << 40}, remarkNotFound},
		{"negative", protocol.EndTransactionRequestHeader{ProducerGroup: "pg", CommitLogOffset: -5}, remarkNotFound},
		{"mid-record", protocol.EndTransactionRequestHeader{ProducerGroup: "pg", CommitLogOffset: res.WroteOffset + 3}, remarkNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.h.CommitOrRollback = protocol.TransactionCommitType
			code, remark := e.svc.End(t.Context(), &c.h)
			if code != protocol.SystemError || remark != c.remark {
				t.Fatalf("got %d %q, want SYSTEM_ERROR %q", code, remark, c.remark)
			}
		})
	}
	// A record that is not a half message (the op record of a rollback).
	r2 := e.putHalf("c", "U2")
	if code, _ := e.end(r2.WroteOffset, r2.QueueOffset, protocol.TransactionRollbackType); code != protocol.Success {
		t.Fatal("rollback failed")
	}
	e.waitQueue(meta.TransOpHalfTopic, 0, 1)
	op := e.messages(meta.TransOpHalfTopic, 0)[0]
	code, remark := e.end(op.PhysicalOffset, op.QueueOffset, protocol.TransactionCommitType)
	if code != protocol.SystemError || remark != remarkNotFound {
		t.Fatalf("END on an op record: %d %q", code, remark)
	}
	e.waitDispatched()
	if n := e.store.MaxOffset("T", 3); n != 0 {
		t.Fatalf("a refused END delivered %d messages", n)
	}
}

// checkOf decodes a CHECK_TRANSACTION_STATE request.
func checkOf(t *testing.T, req *remoting.Command) (protocol.CheckTransactionStateRequestHeader, message.Record) {
	t.Helper()
	if req.Code != protocol.CheckTransactionState {
		t.Fatalf("code %d", req.Code)
	}
	var h protocol.CheckTransactionStateRequestHeader
	must(t, h.Decode(req.ExtFields))
	r, n, err := message.DecodeRecord(req.Body, true)
	must(t, err)
	if n != len(req.Body) {
		t.Fatalf("check body: %d of %d bytes", n, len(req.Body))
	}
	return h, r
}

func TestCheckThenCommit(t *testing.T) {
	e := newEnv(t, nil)
	res := e.putHalf("b", "U1")
	e.round()
	if c := e.prod.take(); len(c) != 0 {
		t.Fatalf("a young half message was checked (%d)", len(c))
	}
	e.advance(7 * time.Second)
	e.round()
	checks := e.prod.take()
	if len(checks) != 1 {
		t.Fatalf("%d checks, want 1", len(checks))
	}
	h, r := checkOf(t, checks[0])
	if h.TranStateTableOffset != 1 || h.CommitLogOffset <= res.WroteOffset || h.MsgID != "U1" || h.TransactionID != "U1" {
		t.Fatalf("check header %+v", h)
	}
	if want := message.OffsetMsgID(storeHost, h.CommitLogOffset); h.OffsetMsgID != want {
		t.Fatalf("offsetMsgId %s, want %s", h.OffsetMsgID, want)
	}
	if r.Topic != "T" || r.QueueID != 3 || string(r.Body) != "b" || r.PhysicalOffset != h.CommitLogOffset || r.QueueOffset != 1 {
		t.Fatalf("check body: topic %s queue %d body %q offsets %d/%d", r.Topic, r.QueueID, r.Body, r.PhysicalOffset, r.QueueOffset)
	}
	if v, _ := message.Property(r.Properties, message.PropertyTransactionCheckTimes); v != "1" {
		t.Fatalf("check times %q", v)
	}
	if g, _ := message.Property(r.Properties, message.PropertyProducerGroup); g != "pg" {
		t.Fatalf("PGROUP %q", g)
	}
	if off, _ := e.offsets.Query(meta.TransCheckGroup, meta.TransHalfTopic, 0); off != 1 {
		t.Fatalf("half progress %d, want 1", off)
	}

	// The producer answers about the copy the check named.
	if code, remark := e.end(h.CommitLogOffset, h.TranStateTableOffset, protocol.TransactionCommitType); code != protocol.Success {
		t.Fatalf("commit after check: %d %s", code, remark)
	}
	e.waitQueue("T", 3, 1)
	// A repeated answer (the client's END is one-way; a check answered
	// twice) stores nothing more.
	for _, how := range []int32{protocol.TransactionCommitType, protocol.TransactionRollbackType} {
		if code, _ := e.end(h.CommitLogOffset, h.TranStateTableOffset, how); code != protocol.Success {
			t.Fatalf("repeated end: %d", code)
		}
	}
	e.advance(time.Minute)
	e.round()
	if c := e.prod.take(); len(c) != 0 {
		t.Fatalf("%d checks after the commit", len(c))
	}
	if n, ops := e.store.MaxOffset("T", 3), e.store.MaxOffset(meta.TransOpHalfTopic, 0); n != 1 || ops != 1 {
		t.Fatalf("after repeated END: %d messages, %d op records", n, ops)
	}
	half, _ := e.offsets.Query(meta.TransCheckGroup, meta.TransHalfTopic, 0)
	op, _ := e.offsets.Query(meta.TransCheckGroup, meta.TransOpHalfTopic, 0)
	if half != 2 || op != 1 {
		t.Fatalf("progress half %d op %d, want 2 and 1", half, op)
	}
}

func TestCheckMaxDiscards(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CheckMax = 3 })
	e.putHalf("never", "U1")
	e.putHalf("other", "U2")
	var perRound []int
	for range 6 {
		e.advance(time.Minute)
		e.round()
		perRound = append(perRound, len(e.prod.take()))
	}
	if want := []int{2, 2, 2, 0, 0, 0}; !slices.Equal(perRound, want) {
		t.Fatalf("checks per round %v, want %v", perRound, want)
	}
	got := e.messages(meta.TransCheckMaxTopic, 0)
	if len(got) != 2 {
		t.Fatalf("%d discarded messages, want 2", len(got))
	}
	for _, r := range got {
		if v, _ := message.Property(r.Properties, message.PropertyTransactionCheckTimes); v != "3" {
			t.Fatalf("discarded with check times %q", v)
		}
	}
	if _, ok := e.topics.Get(meta.TransCheckMaxTopic); !ok {
		t.Fatal(meta.TransCheckMaxTopic + " not created")
	}
	if n := e.store.MaxOffset("T", 3); n != 0 {
		t.Fatalf("discarded messages delivered (%d)", n)
	}
}

// A producer's late END for the copy a check replaced, then its answer to
// the check: one delivery, and no further check.
func TestLateEndAndCheckAnswerDeliverOnce(t *testing.T) {
	e := newEnv(t, nil)
	res := e.putHalf("b", "U1")
	e.advance(7 * time.Second)
	e.round()
	checks := e.prod.take()
	if len(checks) != 1 {
		t.Fatalf("%d checks", len(checks))
	}
	h, _ := checkOf(t, checks[0])
	if code, _ := e.end(res.WroteOffset, res.QueueOffset, protocol.TransactionCommitType); code != protocol.Success {
		t.Fatal("late commit refused")
	}
	if code, _ := e.end(h.CommitLogOffset, h.TranStateTableOffset, protocol.TransactionCommitType); code != protocol.Success {
		t.Fatal("check answer refused")
	}
	e.waitQueue("T", 3, 1)
	e.advance(time.Minute)
	e.round()
	if c := e.prod.take(); len(c) != 0 {
		t.Fatalf("%d checks after the commit", len(c))
	}
	e.waitDispatched()
	if n := e.store.MaxOffset("T", 3); n != 1 {
		t.Fatalf("%d deliveries, want 1", n)
	}
}

// The progress survives a restart of the service (offsets reopened from
// their file): the next process checks the re-appended copy, not the
// original again, and a settlement made before the restart is honoured
// through its op record.
func TestCheckResumesAfterRestart(t *testing.T) {
	e := newEnv(t, nil)
	settled := e.putHalf("settled", "U0")
	e.putHalf("open", "U1")
	e.advance(7 * time.Second)
	e.round()
	if c := e.prod.take(); len(c) != 2 {
		t.Fatalf("%d checks, want 2", len(c))
	}
	// Commit "settled" by its original offsets (its copy is outstanding).
	if code, _ := e.end(settled.WroteOffset, settled.QueueOffset, protocol.TransactionCommitType); code != protocol.Success {
		t.Fatal("commit refused")
	}
	e.waitQueue("T", 3, 1)
	must(t, e.offsets.Close())
	e.openMeta()
	e.newService(nil)

	e.advance(time.Minute)
	e.round()
	checks := e.prod.take()
	var bodies []string
	for _, c := range checks {
		_, r := checkOf(t, c)
		times, _ := message.Property(r.Properties, message.PropertyTransactionCheckTimes)
		bodies = append(bodies, string(r.Body)+"#"+times)
	}
	// "settled" was committed through its original's offsets after the
	// check re-appended it: its copy must not be checked again, not even
	// by a process that never saw the END. "open" is checked once more
	// (its copy, check times 2), never its original again.
	if want := []string{"open#2"}; !slices.Equal(bodies, want) {
		t.Fatalf("checks after restart %v, want %v", bodies, want)
	}
	half, _ := e.offsets.Query(meta.TransCheckGroup, meta.TransHalfTopic, 0)
	if half != 4 {
		t.Fatalf("half progress %d, want 4", half)
	}
}

func TestParseOp(t *testing.T) {
	tags := message.SetProperty("", message.PropertyTags, "d")
	cases := []struct {
		props, body string
		want        []int64
	}{
		{tags, "17", []int64{17}},
		{tags, "17,18,21,", []int64{17, 18, 21}},
		{tags, ",,5", []int64{5}},
		{tags, "", nil},
		{tags, "x", nil},
		{tags, "-1", nil},
		{tags, "1,x,", nil},
		{message.SetProperty("", message.PropertyTags, "e"), "17", nil},
		{"", "17", nil},
	}
	for _, c := range cases {
		if got := parseOp(c.props, []byte(c.body)); !slices.Equal(got, c.want) {
			t.Errorf("parseOp(%q, %q) = %v, want %v", c.props, c.body, got, c.want)
		}
	}
}

func TestServiceLoop(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CheckInterval = 20 * time.Millisecond })
	e.putHalf("b", "U1")
	e.waitDispatched()
	e.advance(7 * time.Second)
	must(t, e.svc.Start())
	if err := e.svc.Start(); err == nil {
		t.Fatal("second Start accepted")
	}
	e.svc.Kick()
	wait.For(t, 5*time.Second, "a check from the running service", func() bool { return len(e.prod.take()) > 0 })
	wait.For(t, 5*time.Second, "the kicked round counted", func() bool { return e.svc.Rounds() >= 1 })
	must(t, e.svc.Close())
	must(t, e.svc.Close())
}

// Only transactions that may exist as several half records are remembered
// (memory must not grow with the send rate), and not for longer than a
// copy can live.
func TestSettledMemoryBounded(t *testing.T) {
	e := newEnv(t, nil)
	for i := range 10 {
		res := e.putHalf("fast", "F"+strconv.Itoa(i))
		if code, _ := e.end(res.WroteOffset, res.QueueOffset, protocol.TransactionCommitType); code != protocol.Success {
			t.Fatal("commit refused")
		}
	}
	if n := e.settledLen(); n != 0 {
		t.Fatalf("%d fast-path settlements remembered", n)
	}
	e.putHalf("slow", "S")
	e.advance(7 * time.Second)
	e.round()
	checks := e.prod.take()
	if len(checks) != 1 {
		t.Fatalf("%d checks", len(checks))
	}
	h, _ := checkOf(t, checks[0])
	if code, _ := e.end(h.CommitLogOffset, h.TranStateTableOffset, protocol.TransactionCommitType); code != protocol.Success {
		t.Fatal("commit refused")
	}
	if n := e.settledLen(); n != 1 {
		t.Fatalf("%d settlements remembered, want the checked one", n)
	}
	e.advance(e.svc.settleMemory + time.Second)
	e.round()
	if n := e.settledLen(); n != 0 {
		t.Fatalf("%d settlements remembered past their time", n)
	}
}

func (e *env) settledLen() int {
	e.svc.mu.Lock()
	defer e.svc.mu.Unlock()
	return len(e.svc.mu.settled)
}

// A half message with CHECK_IMMUNITY_TIME_IN_SECONDS is not checked before
// its immunity ends, and does not hold up the messages after it; the
// producer's END with the original offsets settles its copies too.
func TestCheckImmunity(t *testing.T) {
	e := newEnv(t, nil)
	immune := e.putHalfWith("immune", "I", map[string]string{message.PropertyCheckImmunityTimeInSeconds: "30"})
	e.putHalf("plain", "P")
	e.advance(7 * time.Second)
	e.round()
	var bodies []string
	for _, c := range e.prod.take() {
		_, r := checkOf(t, c)
		bodies = append(bodies, string(r.Body))
	}
	if !slices.Equal(bodies, []string{"plain"}) {
		t.Fatalf("checked %v, want only plain", bodies)
	}
	copies := e.messages(meta.TransHalfTopic, 0)
	if len(copies) != 4 {
		t.Fatalf("%d half records, want 2 + 2 copies", len(copies))
	}
	if v, _ := message.Property(copies[2].Properties, message.PropertyTransactionPreparedQueueOff); string(copies[2].Body) != "immune" || v != "0" {
		t.Fatalf("immune copy %q with TRAN_PREPARED_QUEUE_OFFSET %q", copies[2].Body, v)
	}
	// Still immune: re-appended again, not checked.
	e.advance(10 * time.Second)
	e.round()
	if c := e.prod.take(); len(c) != 1 { // the copy of "plain", checked again
		t.Fatalf("%d checks, want 1", len(c))
	}
	if code, _ := e.end(immune.WroteOffset, immune.QueueOffset, protocol.TransactionCommitType); code != protocol.Success {
		t.Fatal("commit refused")
	}
	e.waitQueue("T", 3, 1)
	e.advance(time.Minute)
	e.round()
	e.advance(time.Minute)
	e.round()
	for _, c := range e.prod.take() {
		if _, r := checkOf(t, c); string(r.Body) == "immune" {
			t.Fatal("a committed immune message was checked")
		}
	}
	e.waitDispatched()
	if n := e.store.MaxOffset("T", 3); n != 1 {
		t.Fatalf("%d deliveries, want 1", n)
	}
}

// A half message whose properties leave no room for TRANSACTION_CHECK_TIMES
// cannot be re-appended: it is parked at once instead of holding up the
// walk, and the message after it is checked.
func TestCheckUnappendableIsParked(t *testing.T) {
	e := newEnv(t, nil)
	// Sized so that the half message fits and its checked copy does not.
	pad := strings.Repeat("x", message.MaxPropertiesLen-200)
	e.putHalfWith("huge", "H", map[string]string{"pad": pad})
	e.waitDispatched()
	r, buf, err := e.store.LookMessageByOffset(0)
	must(t, err)
	room := message.MaxPropertiesLen - len(r.Properties)
	buf.Release()
	e.putHalfWith("huge2", "H2", map[string]string{"pad": pad + strings.Repeat("y", room-5)})
	e.putHalf("next", "N")
	e.advance(7 * time.Second)
	e.round()
	var bodies []string
	for _, c := range e.prod.take() {
		_, r := checkOf(t, c)
		bodies = append(bodies, string(r.Body))
	}
	if !slices.Equal(bodies, []string{"huge", "next"}) {
		t.Fatalf("checked %v, want huge and next", bodies)
	}
	parked := e.messages(meta.TransCheckMaxTopic, 0)
	if len(parked) != 1 || string(parked[0].Body) != "huge2" {
		t.Fatalf("parked %d messages", len(parked))
	}
}

// TestResumeDiscarded: a half message discarded after CheckMax checks is
// checked CheckMax times again once resumed, then discarded again.
func TestResumeDiscarded(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CheckMax = 2 })
	e.putHalf("late", "U1")
	checks := 0
	for range 4 {
		e.advance(time.Minute)
		e.round()
		checks += len(e.prod.take())
	}
	discarded := e.messages(meta.TransCheckMaxTopic, 0)
	if checks != 2 || len(discarded) != 1 {
		t.Fatalf("%d checks, %d discarded before resuming", checks, len(discarded))
	}
	before := e.store.MaxOffset(meta.TransHalfTopic, 0)
	res, err := e.svc.Resume(&discarded[0])
	if err != nil || res.Status != store.PutOK {
		t.Fatalf("resume: %v %v", res.Status, err)
	}
	e.waitQueue(meta.TransHalfTopic, 0, before+1)
	halves := e.messages(meta.TransHalfTopic, 0)
	last := halves[len(halves)-1]
	if v, _ := message.Property(last.Properties, message.PropertyTransactionCheckTimes); v != "0" || string(last.Body) != "late" {
		t.Fatalf("resumed copy: check times %q, body %q", v, last.Body)
	}
	checks = 0
	for range 4 {
		e.advance(time.Minute)
		e.round()
		checks += len(e.prod.take())
	}
	if checks != 2 || len(e.messages(meta.TransCheckMaxTopic, 0)) != 2 {
		t.Fatalf("after resuming: %d checks, %d discarded", checks, len(e.messages(meta.TransCheckMaxTopic, 0)))
	}
	// Anything but a half message is refused.
	plain := message.Record{Topic: "T", Properties: message.SetProperty("", message.PropertyRealTopic, "T")}
	if _, err := e.svc.Resume(&plain); !errors.Is(err, ErrNotHalf) {
		t.Fatalf("plain topic: %v", err)
	}
	noReal := message.Record{Topic: meta.TransCheckMaxTopic}
	if _, err := e.svc.Resume(&noReal); !errors.Is(err, ErrNotHalf) {
		t.Fatalf("no REAL_TOPIC: %v", err)
	}
}

// TestServiceStopStart: a demoted master's check-back stops (Kick and
// Stop again do nothing, END is still served) and a promoted one starts
// again, going on from the committed progress: the half message is
// checked again, and a round counts.
func TestServiceStopStart(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CheckInterval = time.Hour })
	e.putHalf("b", "U1")
	e.waitDispatched()
	e.advance(7 * time.Second)
	must(t, e.svc.Start())
	e.svc.Kick()
	wait.For(t, 5*time.Second, "the first check", func() bool { return len(e.prod.take()) == 1 })
	e.svc.Stop()
	e.svc.Stop()
	if e.svc.Running() {
		t.Fatal("running after Stop")
	}
	rounds := e.svc.Rounds()
	e.svc.Kick() // nothing runs it
	if e.svc.Rounds() != rounds {
		t.Fatal("a round ran while stopped")
	}
	// The old master's progress is what the new loop starts from: the
	// first copy was checked, so the re-appended one is next.
	e.advance(7 * time.Second)
	must(t, e.svc.Start())
	if err := e.svc.Start(); err == nil {
		t.Fatal("second Start accepted")
	}
	e.svc.Kick()
	wait.For(t, 5*time.Second, "a check after the restart", func() bool { return len(e.prod.take()) == 1 })
	wait.For(t, 5*time.Second, "a round after the restart", func() bool { return e.svc.Rounds() > rounds })
	must(t, e.svc.Close())
	if err := e.svc.Start(); err == nil {
		t.Fatal("Start after Close accepted")
	}
}
