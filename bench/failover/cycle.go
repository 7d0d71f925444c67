package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// cycleResult is one kill -9 cycle.
type cycleResult struct {
	killed, master       string
	elect, write, client time.Duration
	clientOK             bool
	acked, notAcked      int
	lost, dups, moved    int
	corrupt, storedUnack int
	err                  error
}

type report struct {
	cycles []cycleResult
	total  check
}

func (r *report) lost() int {
	n := r.total.lost
	for _, c := range r.cycles {
		n += c.lost
	}
	return n
}

// runCycles loads the cluster and kills its master o.cycles times.
func runCycles(ctx context.Context, c *cluster, o options, logw io.Writer) (*report, error) {
	led := newLedger()
	g, err := startLoad(c.nsAddr, o.producers, o.bodySize, led)
	if err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			g.stop()
		}
	}()
	rep := &report{}
	for i := 1; i <= o.cycles; i++ {
		res, err := runCycle(ctx, c, o, led, i)
		rep.cycles = append(rep.cycles, res)
		fmt.Fprintf(logw, "cycle %d: killed %s, new master %s, elect %v, write %v, client %v, acked %d, lost %d, dups %d\n",
			i, res.killed, res.master, res.elect.Round(time.Millisecond), res.write.Round(time.Millisecond),
			res.client.Round(time.Millisecond), res.acked, res.lost, res.dups)
		if err != nil {
			return rep, fmt.Errorf("cycle %d: %w", i, err)
		}
	}
	g.stop()
	stopped = true
	mi, err := c.replicaInfo(ctx)
	if err != nil {
		return rep, err
	}
	rep.total, err = verify(ctx, c.rc, mi.MasterAddress, o.bodySize, led)
	return rep, err
}

func runCycle(ctx context.Context, c *cluster, o options, led *ledger, i int) (cycleResult, error) {
	var res cycleResult
	select {
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(o.steady):
	}
	mi, err := c.replicaInfo(ctx)
	if err != nil || !mi.HasMaster {
		return res, fmt.Errorf("no master before the kill: %v", err)
	}
	victim := c.byAddr(mi.MasterAddress)
	if victim == nil {
		return res, fmt.Errorf("master %s is none of the brokers", mi.MasterAddress)
	}
	res.killed = victim.Name
	victim.Kill()
	t0 := time.Now()
	led.killed(i, t0)
	if err := poll(ctx, 60*time.Second, "a new master", func() (bool, error) {
		now, err := c.replicaInfo(ctx)
		return err == nil && now.HasMaster && now.MasterAddress != victim.addr && now.MasterEpoch > mi.MasterEpoch, nil
	}); err != nil {
		return res, err
	}
	res.elect = time.Since(t0)
	at, by, err := c.probeWrite(ctx, victim.addr, 60*time.Second)
	if err != nil {
		return res, err
	}
	res.write = at.Sub(t0)
	if b := c.byAddr(by); b != nil {
		res.master = b.Name
	}
	// The old master rejoins as a slave.
	if err := victim.Start(); err != nil {
		return res, err
	}
	if err := victim.WaitLog(ctx, "broker ready", 60*time.Second); err != nil {
		return res, err
	}
	if err := c.waitSyncStateSet(ctx, 3, 90*time.Second); err != nil {
		return res, err
	}
	// The Go client follows at its route refresh (30 s).
	_ = poll(ctx, 45*time.Second, "the Go client's first SEND_OK", func() (bool, error) {
		_, ok := led.clientResume()
		return ok, nil
	})
	res.client, res.clientOK = led.clientResume()
	chk, err := verify(ctx, c.rc, by, o.bodySize, led)
	if err != nil {
		return res, err
	}
	led.mu.Lock()
	n := led.perCycle[i]
	led.mu.Unlock()
	res.acked, res.notAcked = n[0], n[1]
	res.lost, res.dups, res.moved, res.corrupt, res.storedUnack = chk.lost, chk.duplicated, chk.moved, chk.corrupt, chk.unackedStored
	if chk.lost > 0 {
		var ex []string
		led.mu.Lock()
		for _, k := range chk.lostKeys[:min(5, len(chk.lostKeys))] {
			a := led.acked[k] // acknowledged before the read began
			ex = append(ex, fmt.Sprintf("%s (queue %d offset %d, msgId %s, acknowledged %v after the kill)", k, a.queueID, a.queueOffset,
				a.offsetMsgID, a.at.Sub(t0).Round(time.Millisecond)))
		}
		led.mu.Unlock()
		return res, fmt.Errorf("%d acknowledged messages lost: %s", chk.lost, strings.Join(ex, "; "))
	}
	return res, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/float64(time.Millisecond)) }

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// markdown renders the cycle table and the summary.
func (r *report) markdown() string {
	var b strings.Builder
	b.WriteString("| cycle | killed | new master | elect ms | first write on new master ms | Go client resumes ms | acked | not acked | lost | duplicated | moved | stored, not acked |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var elect, write, client []time.Duration
	for i, c := range r.cycles {
		cl := "-"
		if c.clientOK {
			cl = ms(c.client)
			client = append(client, c.client)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %d | %d | %d | %d | %d | %d |\n", i+1, c.killed, c.master,
			ms(c.elect), ms(c.write), cl, c.acked, c.notAcked, c.lost, c.dups, c.moved, c.storedUnack)
		if c.write > 0 {
			elect, write = append(elect, c.elect), append(write, c.write)
		}
	}
	worst := func(ds []time.Duration) time.Duration {
		if len(ds) == 0 {
			return 0
		}
		return slices.Max(ds)
	}
	fmt.Fprintf(&b, "\nfail-over (kill -9 to the first acknowledged send on the new master): median %s ms, worst %s ms over %d cycles\n",
		ms(median(write)), ms(worst(write)), len(write))
	fmt.Fprintf(&b, "election (kill -9 to the controller naming the new master): median %s ms, worst %s ms\n", ms(median(elect)), ms(worst(elect)))
	fmt.Fprintf(&b, "official Go client resuming (bounded by its 30 s route refresh): median %s ms, worst %s ms\n", ms(median(client)), ms(worst(client)))
	fmt.Fprintf(&b, "final read-back: %d acknowledged, %d intact, %d lost, %d duplicated, %d moved, %d corrupt\n",
		r.total.acked, r.total.ok, r.total.lost, r.total.duplicated, r.total.moved, r.total.corrupt)
	return b.String()
}
