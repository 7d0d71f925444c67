package remoting

import (
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// chunkConn is a net.Conn whose reads return data in pieces of the sizes
// cuts gives in turn (0 counts as 1), checking on each read that the
// reader's frame buffer is at most twice the bytes it has been given.
type chunkConn struct {
	t      *testing.T
	data   []byte
	cuts   []byte
	served int
	c      *Conn // the reader, set once made
	// stalls: the first reads fail with a timeout, as if the read
	// deadline had fired with the last activity a second ago.
	stalls    int
	deadlines []time.Time // read deadlines set
}

func (cc *chunkConn) Read(p []byte) (int, error) {
	if cc.stalls > 0 {
		cc.stalls--
		cc.c.in.last = time.Now().Add(-time.Second).UnixNano()
		return 0, os.ErrDeadlineExceeded
	}
	if held := cc.c.frameHeld.Load(); held > 2*int64(cc.served) {
		cc.t.Fatalf("frame buffer of %d bytes after %d bytes received", held, cc.served)
	}
	if len(cc.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(cc.cuts) > 0 {
		n = max(int(cc.cuts[0]), 1)
		cc.cuts = append(cc.cuts[1:], cc.cuts[0])
	}
	n = copy(p, cc.data[:min(n, len(cc.data))])
	cc.data = cc.data[n:]
	cc.served += n
	return n, nil
}

func (cc *chunkConn) Write(p []byte) (int, error) { return len(p), nil }
func (cc *chunkConn) Close() error                { return nil }
func (cc *chunkConn) LocalAddr() net.Addr         { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }
func (cc *chunkConn) RemoteAddr() net.Addr        { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2} }
func (cc *chunkConn) SetDeadline(time.Time) error { return nil }
func (cc *chunkConn) SetReadDeadline(t time.Time) error {
	cc.deadlines = append(cc.deadlines, t)
	return nil
}
func (cc *chunkConn) SetWriteDeadline(time.Time) error { return nil }

// collectOwner keeps the requests a reader dispatches.
type collectOwner struct {
	reqs   []*Command
	warn   warnLimiter
	closes closeLimiters
}

func (o *collectOwner) dispatch(_ *Conn, reqs []*Command) { o.reqs = append(o.reqs, reqs...) }
func (o *collectOwner) nextOpaque() int32                 { return 1 }
func (o *collectOwner) connClosed(*Conn)                  {}
func (o *collectOwner) badFrameLimiter() *warnLimiter     { return &o.warn }
func (o *collectOwner) closeLog() *closeLimiters          { return &o.closes }
func (o *collectOwner) extPolicy() *extPolicy             { return nil }

// fuzzMaxFrame bounds the frames FuzzReadFrames accepts, so that frames
// past the small read buffer it also uses are common.
const fuzzMaxFrame = 1 << 20

// FuzzReadFrames: a connection's reader, fed a byte stream in pieces of
// any sizes, with a read buffer of 16 bytes (every frame past it is
// assembled in chunks) and with the real one, dispatches exactly the
// requests that decoding the stream frame by frame gives, then stops for
// the same reason (end of stream between or inside frames, a bad length,
// a malformed frame, a TLS handshake); its frame buffer never exceeds
// twice the bytes received.
func FuzzReadFrames(f *testing.F) {
	var stream []byte
	for _, s := range fuzzSeeds() {
		var l [4]byte
		binary.BigEndian.PutUint32(l[:], uint32(len(s)))
		f.Add(append(l[:], s...), []byte{1, 7, 200})
		stream = append(append(stream, l[:]...), s...)
	}
	f.Add(stream, []byte{3})
	f.Add(stream, []byte{255, 16, 0})
	big := &Command{Code: 310, Flag: 2, Body: []byte(strings.Repeat("0123456789", 300)), ExtFields: sendV2Fields()}
	bigFrame, _ := big.AppendFrame(nil)
	f.Add(append(bigFrame, bigFrame...), []byte{64, 255, 1})
	f.Add(bigFrame[:len(bigFrame)-1], []byte{33})
	f.Add([]byte{0, 0x10, 0, 0, 1, 2, 3}, []byte{2})   // announces 1 MiB, sends little
	f.Add([]byte{0x16, 3, 1, 0, 0x80}, []byte{5})      // TLS ClientHello
	f.Add([]byte{0x7F, 0xFF, 0xFF, 0xFF, 0}, []byte{}) // past the limit
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		want, wantEnd := decodeStream(data)
		for _, size := range []int{16, readBufferSize} {
			o := &collectOwner{}
			cc := &chunkConn{t: t, data: data, cuts: append([]byte(nil), cuts...)}
			c := newConn(cc, o, slog.New(slog.DiscardHandler), fuzzMaxFrame, 0)
			c.readBuf = size
			cc.c = c
			err := c.readFrames()
			if len(o.reqs) != len(want) {
				t.Fatalf("read buffer %d: %d requests, want %d (stopped: %v)", size, len(o.reqs), len(want), err)
			}
			for i := range want {
				if !equalCommands(o.reqs[i], want[i]) {
					t.Fatalf("read buffer %d: request %d\n%+v\nwant\n%+v", size, i, o.reqs[i], want[i])
				}
			}
			if !wantEnd(err) {
				t.Fatalf("read buffer %d: stopped with %v", size, err)
			}
			if c.frameLen.Load() != 0 || c.frameHeld.Load() != 0 {
				t.Fatalf("read buffer %d: frame state left behind: %d, %d", size, c.frameLen.Load(), c.frameHeld.Load())
			}
		}
	})
}

// decodeStream decodes data frame by frame as the reader should: the
// requests in it, and a test of the error the reader must stop with.
func decodeStream(data []byte) ([]*Command, func(error) bool) {
	var reqs []*Command
	for first := true; ; first = false {
		if len(data) < 4 {
			return reqs, func(err error) bool { return errors.Is(err, io.EOF) }
		}
		if first && data[0] == tlsHandshake {
			return reqs, func(err error) bool { return err != nil && strings.Contains(err.Error(), "TLS") }
		}
		length := int64(int32(binary.BigEndian.Uint32(data)))
		if length < 4 || length+4 > fuzzMaxFrame {
			return reqs, func(err error) bool { return errors.Is(err, ErrFrameTooLarge) }
		}
		if int64(len(data)-4) < length {
			return reqs, func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }
		}
		cmd, err := DecodeFrame(data[4 : 4+length])
		if err != nil {
			return reqs, func(err error) bool { return errors.Is(err, ErrMalformed) }
		}
		if !cmd.IsResponse() {
			reqs = append(reqs, cmd)
		}
		data = data[4+length:]
	}
}

// TestIdleProbe: when the read deadline finds the connection idle, one more
// read with a short deadline (idleProbe) is made before closing, so bytes
// that waited in the socket while the reader was not scheduled are read,
// not dropped with the connection; a probe that finds nothing closes it.
func TestIdleProbe(t *testing.T) {
	frame, err := NewRequest(34, nil, []byte("hb")).AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		stalls, requests int
		end              error
	}{
		{stalls: 1, requests: 1, end: io.EOF}, // the probe reads the waiting frame
		{stalls: 2, requests: 0, end: errIdle},
	} {
		o := &collectOwner{}
		cc := &chunkConn{t: t, data: frame, cuts: []byte{255}, stalls: tc.stalls}
		c := newConn(cc, o, slog.New(slog.DiscardHandler), DefaultMaxFrameSize, 100*time.Millisecond)
		cc.c = c
		c.lastWrite.Store(time.Now().Add(-time.Second).UnixNano())
		start := time.Now()
		err := c.readFrames()
		if len(o.reqs) != tc.requests || !errors.Is(err, tc.end) {
			t.Fatalf("%d stalls: %d requests, ended with %v; want %d, %v", tc.stalls, len(o.reqs), err, tc.requests, tc.end)
		}
		// The first deadline is the idle timeout's; the second, set on
		// the first stall, the probe's.
		if len(cc.deadlines) < 2 {
			t.Fatalf("%d stalls: deadlines %v", tc.stalls, cc.deadlines)
		}
		if d := cc.deadlines[1].Sub(start); d < idleProbe || d > idleProbe+time.Second {
			t.Fatalf("%d stalls: probe deadline %v after the start, want %v", tc.stalls, d, idleProbe)
		}
	}
}
