package ha

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/auth"
)

// masterConn is one slave's connection on the master: readLoop takes its
// offset reports, writeLoop streams the CommitLog to it. Either loop ending
// closes the socket, which ends the other; the second to finish removes the
// connection from the server.
type masterConn struct {
	s    *Server
	nc   net.Conn
	addr string

	acked     atomic.Int64  // last report; -1 before the first
	next      atomic.Int64  // next offset to transfer; -1 before streaming
	sent      flow          // bytes transferred, for the HA status
	first     chan struct{} // closed at the first report
	firstOnce sync.Once
	// diverged: the slave reported an offset beyond the master's end.
	diverged atomic.Bool
	kick     chan struct{}
	quit     chan struct{} // closed when either loop ends

	// AutoSwitch mode (doc.go): the slave's handshake, closed once read,
	// and what it said; the caught-up bookkeeping (unix nanos).
	hs               chan struct{}
	brokerID         atomic.Int64 // -1 before the handshake
	syncFromLastFile atomic.Bool
	asyncLearner     atomic.Bool
	lastMasterMax    atomic.Int64 // the master's end at the last transfer
	lastTransfer     atomic.Int64 // when the last transfer was written
	caughtUp         atomic.Int64 // when the slave last had everything
	quitOnce         sync.Once
	live             atomic.Int32 // loops still running
}

func newMasterConn(s *Server, nc net.Conn) *masterConn {
	c := &masterConn{s: s, nc: nc, addr: nc.RemoteAddr().String(),
		first: make(chan struct{}), kick: make(chan struct{}, 1), quit: make(chan struct{}), hs: make(chan struct{})}
	c.acked.Store(-1)
	c.brokerID.Store(-1)
	c.next.Store(-1)
	c.live.Store(2)
	return c
}

func (c *masterConn) kickWriter() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// end closes the connection once, with the reason; the last loop to end
// unregisters it.
func (c *masterConn) end(err error) {
	c.quitOnce.Do(func() {
		close(c.quit)
		_ = c.nc.Close()
		if err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.EOF) {
			// Limited: a slave of the other protocol or a diverged one
			// reconnects every second.
			c.s.closeLog.Log(c.s.log, slog.LevelWarn, "ha: slave connection closed", "slave", c.addr, "acked", c.acked.Load(), "err", err)
		} else {
			c.s.log.Info("ha: slave disconnected", "slave", c.addr, "acked", c.acked.Load())
		}
	})
	if c.live.Add(-1) == 0 {
		if c.s.cfg.AutoSwitch {
			c.s.connGone(c)
		}
		c.s.drop(c)
	}
	c.s.wg.Done()
}

// readLoop reads 8-byte offset reports until the connection fails or stays
// silent for HousekeepingInterval.
func (c *masterConn) readLoop() {
	var err error
	defer func() { c.end(err) }()
	br := bufio.NewReaderSize(c.nc, 1<<10)
	if a := c.s.cfg.Authenticator; a != nil {
		if err = c.authenticate(a, br); err != nil {
			return
		}
	}
	if c.s.cfg.AutoSwitch {
		err = c.readAutoSwitch(br)
		return
	}
	var b [ReportSize]byte
	for {
		if err = c.nc.SetReadDeadline(time.Now().Add(c.s.cfg.HousekeepingInterval)); err != nil {
			return
		}
		if _, err = io.ReadFull(br, b[:]); err != nil {
			return
		}
		off, derr := decodeReport(b[:])
		if derr != nil {
			err = derr
			return
		}
		// Only the last complete report counts (Java reads in units of 8).
		for br.Buffered() >= ReportSize {
			if _, err = io.ReadFull(br, b[:]); err != nil {
				return
			}
			if off, err = decodeReport(b[:]); err != nil {
				return
			}
		}
		c.onReport(off)
	}
}

// onReport takes a slave's offset report: its ack, or the divergence of
// a slave ahead of the master.
func (c *masterConn) onReport(off int64) {
	if end := c.s.src.CommitLogMaxOffset(); off > end {
		if !c.diverged.Swap(true) {
			c.s.log.Error("ha: slave's CommitLog is ahead of the master's: it holds data the master never wrote (diverged); refusing to replicate to it",
				"slave", c.addr, "slaveEnd", off, "masterEnd", end)
		}
		c.firstOnce.Do(func() { close(c.first) })
		c.kickWriter()
		// The writer tells the slave and closes; keep reading until then.
		return
	}
	c.acked.Store(off)
	c.firstOnce.Do(func() { close(c.first) })
	if c.s.cfg.AutoSwitch {
		c.s.onAutoSwitchAck(c, off)
		return
	}
	c.s.onAck(off)
}

// writeLoop streams the CommitLog from the slave's first report on.
func (c *masterConn) writeLoop() {
	err := c.stream()
	c.end(err)
}

func (c *masterConn) stream() error {
	cfg := &c.s.cfg
	auto := cfg.AutoSwitch
	bw := bufio.NewWriterSize(c.nc, 2*cfg.TransferBatchSize+2*TransferHeaderSize)
	hdr := make([]byte, 0, TransferHeaderSize)
	var ep epochCursor // AutoSwitch: the epoch of the bytes at next
	write := func(next int64, data []byte) error {
		if err := c.nc.SetWriteDeadline(time.Now().Add(cfg.HousekeepingInterval)); err != nil {
			return err
		}
		if auto {
			hdr = TransferHeader{Size: int32(len(data)), Offset: next, Epoch: ep.cur.Epoch,
				EpochStart: ep.cur.StartOffset, ConfirmOffset: c.s.ConfirmOffset()}.AppendTo(hdr[:0])
		} else {
			hdr = Header{Offset: next, Size: int32(len(data))}.AppendTo(hdr[:0])
		}
		if _, err := bw.Write(hdr); err != nil {
			return err
		}
		_, err := bw.Write(data)
		return err
	}
	if auto {
		if err := c.handshake(bw); err != nil {
			return err
		}
		ep.src = c.s.epochs
	}
	select {
	case <-c.first:
	case <-c.quit:
		return nil
	}
	if c.diverged.Load() {
		if !auto {
			// One heartbeat at the master's end lets the slave log both ends.
			if err := write(c.s.src.CommitLogMaxOffset(), nil); err != nil {
				return err
			}
			if err := bw.Flush(); err != nil {
				return err
			}
		}
		return errors.New("ha: slave diverged (its CommitLog is ahead of the master's)")
	}
	next := c.acked.Load()
	if next == 0 {
		end := c.s.src.CommitLogMaxOffset()
		next = end - end%cfg.SegmentSize
		if mo, ok := c.s.src.(interface{ CommitLogMinOffset() int64 }); ok && auto && !c.syncFromLastFile.Load() {
			// Java's AutoSwitch master sends an empty slave everything
			// it has unless it asked for the last file only.
			next = mo.CommitLogMinOffset()
		}
	}
	if auto && !ep.seek(next) {
		return fmt.Errorf("ha: no epoch entry of the master holds offset %d (entries %v)", next, ep.entries)
	}
	c.next.Store(next)
	c.s.log.Info("ha: streaming to slave", "slave", c.addr, "from", next, "brokerId", c.brokerID.Load(), "epoch", ep.cur.Epoch)
	lastWrite := time.Now()
	timer := time.NewTimer(pollInterval)
	defer timer.Stop()
	for {
		n := cfg.TransferBatchSize
		if auto {
			// A transfer never crosses an epoch's end: the slave appends
			// the epoch entry before the bytes of the epoch.
			if !ep.seek(next) {
				return fmt.Errorf("ha: no epoch entry of the master holds offset %d (entries %v)", next, ep.entries)
			}
			n = int(min(int64(n), ep.cur.EndOffset-next))
		}
		buf, err := c.s.src.ReadRaw(next, n)
		if err != nil {
			return fmt.Errorf("ha: read commitlog at %d for slave: %w", next, err)
		}
		if n := len(buf.Bytes); n > 0 {
			if auto {
				c.lastMasterMax.Store(c.s.src.CommitLogMaxOffset())
				c.lastTransfer.Store(time.Now().UnixNano())
			}
			err = write(next, buf.Bytes)
			buf.Release()
			if err != nil {
				return err
			}
			next += int64(n)
			c.next.Store(next)
			lastWrite = time.Now()
			c.sent.add(n, lastWrite)
			continue // stream on; bufio writes out whenever it fills
		}
		if bw.Buffered() > 0 {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
		if auto && c.acked.Load() >= next {
			// Nothing left to send and the slave has it all (Java
			// refreshes its caught-up time whenever nothing is left).
			c.caughtUp.Store(time.Now().UnixNano())
		}
		if time.Since(lastWrite) >= cfg.HeartbeatInterval {
			if err := write(next, nil); err != nil {
				return err
			}
			if err := bw.Flush(); err != nil {
				return err
			}
			lastWrite = time.Now()
		}
		// Appended but not yet committed: look again very soon. Otherwise
		// sleep until a put kicks (or the poll, for puts that do not wait).
		d := pollInterval
		if c.s.src.CommitLogMaxOffset() > next {
			d = committedPoll
			if c.s.arrivals {
				d = commitWait
			}
		}
		timer.Reset(d)
		select {
		case <-c.quit:
			return nil
		case <-c.s.quit:
			return nil
		case <-c.kick:
		case <-timer.C:
		}
	}
}

// authenticate challenges the slave and reads its answer (doc.go,
// "Authentication") before the first report is taken: until then the
// writer streams nothing. Reports sent before the answer are skipped; the
// slave reports again right after it. The whole exchange must end within
// HousekeepingInterval.
func (c *masterConn) authenticate(a *auth.Authenticator, br *bufio.Reader) error {
	var nonce [8]byte
	if _, err := rand.Read(nonce[2:]); err != nil {
		return fmt.Errorf("ha: challenge: %w", err)
	}
	challenge := binary.BigEndian.Uint64(nonce[:]) | challengeMark
	binary.BigEndian.PutUint64(nonce[:], challenge)
	deadline := time.Now().Add(c.s.cfg.HousekeepingInterval)
	if err := c.nc.SetDeadline(deadline); err != nil {
		return err
	}
	if _, err := c.nc.Write(Header{Offset: int64(challenge)}.AppendTo(nil)); err != nil {
		return fmt.Errorf("ha: send challenge: %w", err)
	}
	var unit [ReportSize]byte
	for {
		if _, err := io.ReadFull(br, unit[:]); err != nil {
			c.s.log.Warn("ha: slave did not authenticate; nothing streamed (a Java slave cannot: authenticationEnabled needs rocketd slaves)",
				"slave", c.addr, "err", err)
			return fmt.Errorf("ha: slave %s did not authenticate: %w", c.addr, err)
		}
		if binary.BigEndian.Uint64(unit[:]) == answerMark {
			break
		}
		if _, err := decodeReport(unit[:]); err != nil {
			return err
		}
	}
	var kl [2]byte
	if _, err := io.ReadFull(br, kl[:]); err != nil {
		return fmt.Errorf("ha: read answer: %w", err)
	}
	n := int(binary.BigEndian.Uint16(kl[:]))
	if n > maxAnswerKey {
		return fmt.Errorf("ha: slave %s: answer AccessKey of %d bytes", c.addr, n)
	}
	buf := make([]byte, n+sigSize)
	if _, err := io.ReadFull(br, buf); err != nil {
		return fmt.Errorf("ha: read answer: %w", err)
	}
	user := string(buf[:n])
	if remark, ok := a.VerifyHA(user, nonce[:], buf[n:]); !ok {
		c.s.log.Warn("ha: slave refused", "slave", c.addr, "user", user, "reason", remark)
		return fmt.Errorf("ha: slave %s refused: %s", c.addr, remark)
	}
	if err := c.nc.SetWriteDeadline(time.Time{}); err != nil {
		return err
	}
	c.s.log.Info("ha: slave authenticated", "slave", c.addr, "user", user)
	return nil
}
