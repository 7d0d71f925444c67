package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

const (
	chaosTopic  = "ChaosTopic"
	probeTopic  = "ChaosProbe"
	chaosQueues = 8
)

// flushRun is the cycles of one flush type, on one cluster.
type flushRun struct {
	flush, role string
	kinds       []string
	cycles      []*cycleResult
	lostEver    map[string]lostKey
	err         error
}

// lostKey is a key found lost: the cycle that acknowledged it, and where.
type lostKey struct {
	cycle int
	text  string
}

// cycleResult is one cycle's row.
type cycleResult struct {
	n        int
	kind     string
	acked    int            // SEND_OK in this cycle
	outcomes map[string]int // every other outcome of this cycle's sends
	// recovery is from the end of the fault (restart, space freed,
	// SIGCONT) to the first SEND_OK of a probe; loadRecovery to the load's
	// first SEND_OK.
	recovery     time.Duration
	recovered    bool
	loadRecovery time.Duration
	loadResumed  bool
	restarted    bool // no recovery in time: the master was restarted
	notes        []string
	check        check
}

// env is what a flush run's cycles act on.
type env struct {
	o     *options
	c     *cluster
	disk  *loopFS
	rc    *remoting.Client
	led   *ledger
	load  *loadGen
	read  *reader
	probe int64
}

func runFlush(ctx context.Context, o *options, fr *flushRun, dir string) (err error) {
	e := &env{o: o, led: newLedger()}
	fr.lostEver = map[string]lostKey{}
	masterStore := filepath.Join(dir, "master-store")
	if slices.Contains(fr.kinds, kindDisk) {
		e.disk, err = mountLoop(ctx, dir, o.diskMiB<<20)
		if err != nil {
			err = fmt.Errorf("size-limited file system: %w", err)
			if !o.ci {
				err = fmt.Errorf("%w (run as root with mount, losetup and mkfs.ext4, or leave out --kinds disk)", err)
			}
			return err
		}
		defer func() {
			if uerr := e.disk.unmount(); uerr != nil {
				err = errors.Join(err, fmt.Errorf("unmount %s: %w", e.disk.dir, uerr))
			}
		}()
		masterStore = filepath.Join(e.disk.dir, "store")
	}
	e.c, err = startCluster(ctx, clusterSpec{bin: o.rocketd, dir: dir, masterStore: masterStore, flush: fr.flush, role: fr.role, cleanForcibly: o.cleanForcibly})
	if err != nil {
		return err
	}
	defer e.c.stop()
	e.rc = remoting.NewClient(remoting.ClientConfig{})
	defer e.rc.Close()
	e.read = &reader{rc: e.rc, addr: e.c.masterAddr, topic: chaosTopic, queues: chaosQueues, bodySize: o.bodySize}
	if err := e.setup(ctx); err != nil {
		return err
	}
	e.load, err = newLoadGen(e.c.nsAddr, chaosTopic, o.producers, o.bodySize, o.perCycle, e.led)
	if err != nil {
		return err
	}
	defer e.load.close()
	var rng *rand.Rand
	if o.seed != 0 {
		rng = rand.New(rand.NewPCG(uint64(o.seed), 0))
	}
	for n := 1; n <= o.cycles; n++ {
		kind := fr.kinds[(n-1)%len(fr.kinds)]
		if rng != nil {
			kind = fr.kinds[rng.IntN(len(fr.kinds))]
		}
		cr := &cycleResult{n: n, kind: kind}
		fr.cycles = append(fr.cycles, cr)
		if err := e.cycle(ctx, cr); err != nil {
			return fmt.Errorf("cycle %d (%s): %w", n, kind, err)
		}
		e.led.mu.Lock()
		for _, k := range cr.check.lostKeys {
			if _, seen := fr.lostEver[k]; !seen {
				a := e.led.acked[k]
				fr.lostEver[k] = lostKey{cycle: a.cycle, text: fmt.Sprintf("acked in cycle %d (%s) at queue %d offset %d (offsetMsgId %s), missing after cycle %d",
					a.cycle, fr.cycles[a.cycle-1].kind, a.queueID, a.queueOffset, a.offsetMsgID, n)}
			}
		}
		e.led.mu.Unlock()
		o.logf("%s cycle %d %s: %s", fr.flush, n, kind, cr.summary())
	}
	return nil
}

// setup creates the topics and waits until a send succeeds (with a
// SYNC_MASTER: until the slave is in sync) and the route is published.
func (e *env) setup(ctx context.Context) error {
	for _, t := range []struct {
		name   string
		queues int32
	}{{chaosTopic, chaosQueues}, {probeTopic, 1}} {
		h := protocol.CreateTopicRequestHeader{Topic: t.name, DefaultTopic: "TBW102", ReadQueueNums: t.queues,
			WriteQueueNums: t.queues, Perm: 6, TopicFilterType: protocol.SingleTag}
		// The broker answers SERVICE_NOT_AVAILABLE while it is starting.
		deadline := time.Now().Add(60 * time.Second)
		for {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			r, err := e.rc.Invoke(cctx, e.c.masterAddr, remoting.NewRequest(protocol.UpdateAndCreateTopic, protocol.Ext(&h), nil))
			cancel()
			if err == nil && r.Code == protocol.Success {
				break
			}
			if err == nil {
				err = fmt.Errorf("code %d: %s", r.Code, r.Remark)
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("create topic %s: %w", t.name, err)
			}
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return err
			}
		}
	}
	if _, ok := e.probeUntil(ctx, 60*time.Second); !ok {
		return fmt.Errorf("no successful send within 60 s of the start:\n%s", e.c.master.LogTail(20))
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		h := protocol.GetRouteInfoRequestHeader{Topic: chaosTopic}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		r, err := e.rc.Invoke(cctx, e.c.nsAddr, remoting.NewRequest(protocol.GetRouteinfoByTopic, protocol.Ext(&h), nil))
		cancel()
		if err == nil && r.Code == protocol.Success {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no route of %s on the NameServer after 60 s: %v %v", chaosTopic, err, r)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// probeOnce sends one message to the probe topic on the master with
// rocketd's remoting client and reports whether it was SUCCESS.
func (e *env) probeOnce(ctx context.Context) bool {
	e.probe++
	h := protocol.SendMessageRequestHeader{ProducerGroup: "chaos_probe", Topic: probeTopic, DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 1, BornTimestamp: time.Now().UnixMilli()}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	r, err := e.rc.Invoke(cctx, e.c.masterAddr, remoting.NewRequest(protocol.SendMessage, protocol.Ext(&h), fmt.Appendf(nil, "probe %d", e.probe)))
	return err == nil && r.Code == protocol.Success
}

// probeUntil probes every 50 ms until a SUCCESS or timeout; it returns the
// time it took.
func (e *env) probeUntil(ctx context.Context, timeout time.Duration) (time.Duration, bool) {
	start := time.Now()
	for time.Since(start) < timeout && ctx.Err() == nil {
		if e.probeOnce(ctx) {
			return time.Since(start), true
		}
		_ = sleep(ctx, 50*time.Millisecond)
	}
	return time.Since(start), false
}

// cycle runs one cycle: load, fault, recovery, load, then the read-back of
// every message acknowledged so far.
func (e *env) cycle(ctx context.Context, cr *cycleResult) error {
	stopLoad := e.load.start(cr.n)
	loadStopped := false
	defer func() {
		if !loadStopped {
			stopLoad()
		}
	}()
	if err := sleep(ctx, e.o.steady); err != nil {
		return err
	}
	var cleared time.Time
	var err error
	switch cr.kind {
	case kindKill:
		cleared, err = e.killMaster(cr)
	case kindDisk:
		cleared, err = e.fillDisk(ctx, cr)
	case kindStop:
		cleared, err = e.stopSlave(ctx, cr)
	}
	if err != nil {
		return err
	}
	e.recover(ctx, cr, cleared)
	// The load's own sends must resume too (the client may sit in a send
	// to the dead connection until its 3 s timeout).
	for deadline := time.Now().Add(e.o.recoverTimeout); ; {
		if _, ok := e.led.loadRecovery(cr.n); ok {
			break
		}
		if time.Now().After(deadline) {
			cr.notes = append(cr.notes, fmt.Sprintf("the load had no SEND_OK %.0fs after the recovery", e.o.recoverTimeout.Seconds()))
			break
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	if err := sleep(ctx, e.o.steady); err != nil {
		return err
	}
	stopLoad()
	loadStopped = true
	e.led.mu.Lock()
	out := e.led.outcomes[cr.n]
	cr.acked = out["SEND_OK"]
	cr.outcomes = map[string]int{}
	for k, v := range out {
		if k != "SEND_OK" {
			cr.outcomes[k] = v
		}
	}
	if text := e.led.errSample[cr.n]["error other"]; text != "" {
		// An error of no known kind: show one.
		cr.notes = append(cr.notes, "error other, e.g.: "+text)
	}
	cr.loadRecovery, cr.loadResumed = 0, false
	if ok, seen := e.led.firstOK[cr.n]; seen {
		cr.loadRecovery, cr.loadResumed = ok.Sub(e.led.faultMark[cr.n]), true
	}
	e.led.mu.Unlock()
	if !e.c.master.Running() {
		// The master died after recovering: restart it so that the read
		// can run, and say so.
		cr.notes = append(cr.notes, "master exited after the recovery; restarted to read")
		if err := e.restartMaster(ctx); err != nil {
			return err
		}
	}
	scan, rerr := e.read.readAll(ctx)
	e.led.mu.Lock()
	if rerr != nil {
		cr.check = check{acked: len(e.led.acked), readErr: rerr}
	} else {
		cr.check = classify(e.led.acked, e.led.notAcked, scan)
	}
	e.led.mu.Unlock()
	return ctx.Err()
}

// killMaster is kill -9 of the master and its restart at once; the fault
// ends when the new process starts.
func (e *env) killMaster(cr *cycleResult) (time.Time, error) {
	e.led.markFault(cr.n, time.Now())
	e.c.master.Kill()
	cleared := time.Now()
	e.led.markCleared(cr.n, cleared)
	return cleared, e.c.master.Start()
}

// fillDisk fills the master's file system and keeps it full until a send
// is refused (at most refuseTimeout), then for the fault time; then frees
// it.
func (e *env) fillDisk(ctx context.Context, cr *cycleResult) (time.Time, error) {
	fl, err := newFiller(e.disk.dir)
	if err != nil {
		return time.Time{}, err
	}
	start := time.Now()
	e.led.markFault(cr.n, start)
	var refusedAt time.Time
	for {
		if _, err := fl.fill(); err != nil {
			return time.Time{}, errors.Join(err, fl.remove())
		}
		if refusedAt.IsZero() {
			if t, ok := e.led.refusedSince(cr.n); ok {
				refusedAt = t
				cr.notes = append(cr.notes, fmt.Sprintf("refused %.1fs after the fill", t.Sub(start).Seconds()))
			} else if time.Since(start) > e.o.refuseTimeout {
				cr.notes = append(cr.notes, fmt.Sprintf("no send refused %.0fs after the fill", e.o.refuseTimeout.Seconds()))
				break
			}
		}
		if !refusedAt.IsZero() && time.Since(refusedAt) >= e.o.fault {
			break
		}
		if !e.c.master.Running() {
			cr.notes = append(cr.notes, "master exited on the full disk")
			break
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return time.Time{}, errors.Join(err, fl.remove())
		}
	}
	if err := fl.remove(); err != nil {
		return time.Time{}, err
	}
	cleared := time.Now()
	e.led.markCleared(cr.n, cleared)
	if !e.c.master.Running() {
		cr.notes = append(cr.notes, "exit: "+lastLine(e.c.master.LogTail(3)))
		cr.restarted = true
		if err := e.c.master.Start(); err != nil {
			return cleared, err
		}
	}
	return cleared, nil
}

// stopSlave is SIGSTOP of the slave for the fault time, then SIGCONT.
func (e *env) stopSlave(ctx context.Context, cr *cycleResult) (time.Time, error) {
	if e.c.slave == nil {
		return time.Time{}, errors.New("no slave to stop")
	}
	if err := e.c.slave.Signal(syscall.SIGSTOP); err != nil {
		return time.Time{}, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for !e.c.slave.Stopped() {
		if time.Now().After(deadline) {
			_ = e.c.slave.Signal(syscall.SIGCONT)
			return time.Time{}, errors.New("the slave did not stop within 10 s of SIGSTOP")
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.led.markFault(cr.n, time.Now())
	serr := sleep(ctx, e.o.fault)
	if err := e.c.slave.Signal(syscall.SIGCONT); err != nil {
		return time.Time{}, err
	}
	cleared := time.Now()
	e.led.markCleared(cr.n, cleared)
	return cleared, serr
}

// recover waits for a probe SUCCESS; without one in recoverTimeout the
// master is killed and restarted, and the wait starts again.
func (e *env) recover(ctx context.Context, cr *cycleResult, cleared time.Time) {
	if _, ok := e.probeUntil(ctx, e.o.recoverTimeout); ok {
		cr.recovery, cr.recovered = time.Since(cleared), true
		return
	}
	if ctx.Err() != nil {
		return
	}
	cr.notes = append(cr.notes, fmt.Sprintf("no SEND_OK %.0fs after the fault: master restarted", e.o.recoverTimeout.Seconds()))
	cr.restarted = true
	if err := e.restartMaster(ctx); err != nil {
		cr.notes = append(cr.notes, err.Error())
		return
	}
	if d, ok := e.probeUntil(ctx, e.o.recoverTimeout); ok {
		cr.recovery, cr.recovered = time.Since(cleared), true
		cr.notes = append(cr.notes, fmt.Sprintf("SEND_OK %.1fs after the restart", d.Seconds()))
	}
}

func (e *env) restartMaster(ctx context.Context) error {
	e.c.master.Kill()
	if err := e.c.master.Start(); err != nil {
		return err
	}
	return waitTCP(ctx, e.c.master, e.c.masterAddr, 60*time.Second)
}

func lastLine(s string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			return s[i+1:]
		}
	}
	return s
}
