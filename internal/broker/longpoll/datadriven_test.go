package longpoll

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/testutil/script"
)

// TestHoldSpec runs testdata/holder.txt: the holder's rules as a script of
// directives, each followed by "----" and what it printed. The clock is
// fake and wake-ups run on the test goroutine, so the file is exact.
// Regenerate with go test -run TestHoldSpec -rewrite and review the diff.
//
//	new [short=D] [maxSuspend=D] [perQueue=N] [total=N] [maxOffset=N]
//	                     a fresh holder (maxOffset: what Config.MaxOffset returns)
//	hold NAME [topic=T] [queue=Q] offset=N timeout=D [tags=A,B] [conn=C]
//	                     -> the status, then any wake-ups it caused
//	notify [topic=T] [queue=Q] max=N tags=N
//	advance D            move the clock, run the deadline pass
//	recheck              run the periodic MaxOffset pass
//	close-conn C         the connection closes and is dropped
//	close                Close the holder
//	state                held requests per queue, by name
func TestHoldSpec(t *testing.T) {
	s := &specRun{t: t}
	defer s.stop()
	script.Run(t, "testdata/holder.txt", func(_ *testing.T, c script.Case) string {
		head := c.Directive
		if c.Input != "" {
			head += "\n" + c.Input
		}
		if got := strings.TrimSpace(s.run(head)); got != "" {
			return got
		}
		return "(nothing)"
	})
}

type specRun struct {
	t     *testing.T
	h     *Holder
	now   time.Duration
	max   int64
	conns map[string]*fakeConn
	woken []string
}

func (s *specRun) stop() {
	if s.h != nil {
		_ = s.h.Close()
	}
}

// drain runs the woken requests' Wake here, as the workers would.
func (s *specRun) drain() string {
	s.h.mu.Lock()
	ready := slices.Clone(s.h.mu.ready[s.h.mu.head:])
	clear(s.h.mu.ready)
	s.h.mu.ready, s.h.mu.head = s.h.mu.ready[:0], 0
	s.h.mu.Unlock()
	s.woken = s.woken[:0]
	for _, x := range ready {
		s.h.run(x)
	}
	if len(s.woken) == 0 {
		return ""
	}
	slices.Sort(s.woken)
	return "woke " + strings.Join(s.woken, " ")
}

func (s *specRun) run(directive string) string {
	fields := strings.Fields(directive)
	args := map[string]string{}
	for _, f := range fields[1:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			args[k] = v
		}
	}
	dur := func(k string) time.Duration {
		if args[k] == "" {
			return 0
		}
		d, err := time.ParseDuration(args[k])
		if err != nil {
			s.t.Fatalf("%s: %v", directive, err)
		}
		return d
	}
	num := func(k string, def int64) int64 {
		if args[k] == "" {
			return def
		}
		n, err := strconv.ParseInt(args[k], 10, 64)
		if err != nil {
			s.t.Fatalf("%s: %v", directive, err)
		}
		return n
	}
	switch fields[0] {
	case "new":
		s.stop()
		cfg := Config{ShortPollingTime: dur("short"), ShortPolling: args["short"] != "", MaxSuspend: dur("maxSuspend"),
			MaxPerQueue: int(num("perQueue", 0)), MaxTotal: int(num("total", 0))}
		if args["maxOffset"] != "" {
			s.max = num("maxOffset", 0)
			cfg.MaxOffset = func(string, int32) int64 { return s.max }
		}
		h, err := New(cfg)
		if err != nil {
			return "error: " + err.Error()
		}
		s.h, s.now, s.conns = h, 0, map[string]*fakeConn{}
		h.elapsed = func() time.Duration { return s.now }
		// Running, but without goroutines: the script drives time and
		// the wake-ups.
		h.mu.running = true
		return "ok"
	case "hold":
		name := fields[1]
		r := Request{Topic: args["topic"], QueueID: int32(num("queue", 0)), Offset: num("offset", 0),
			Timeout: dur("timeout"), Wake: func() { s.woken = append(s.woken, name) }}
		if r.Topic == "" {
			r.Topic = "T"
		}
		if tags := args["tags"]; tags != "" {
			var codes []int64
			for _, c := range strings.Split(tags, ",") {
				n, _ := strconv.ParseInt(c, 10, 64)
				codes = append(codes, n)
			}
			r.Match = func(tc int64) bool { return slices.Contains(codes, tc) }
		}
		if c := args["conn"]; c != "" {
			if s.conns[c] == nil {
				s.conns[c] = newFakeConn()
			}
			r.Conn = s.conns[c]
		}
		st := s.h.Hold(r)
		return strings.TrimSpace(st.String() + "\n" + s.drain())
	case "notify":
		topic := args["topic"]
		if topic == "" {
			topic = "T"
		}
		s.h.Notify(topic, int32(num("queue", 0)), num("max", 0), num("tags", 0))
		return s.drain()
	case "set-max":
		s.max = num("max", 0)
		return "ok"
	case "advance":
		d, err := time.ParseDuration(fields[1])
		if err != nil {
			s.t.Fatal(err)
		}
		s.now += d
		s.h.expire()
		return s.drain()
	case "recheck":
		s.h.recheck()
		return s.drain()
	case "close-conn":
		c := s.conns[fields[1]]
		c.Close()
		s.h.DropConn(c)
		return "held " + strconv.Itoa(s.h.Len())
	case "close":
		_ = s.h.Close()
		return "held " + strconv.Itoa(s.h.Len()) + "\n" + s.drain()
	case "state":
		return s.state()
	case "stats":
		st := s.h.Stats()
		return fmt.Sprintf("held=%d arrived=%d expired=%d dropped=%d rejected=%d", st.Held, st.Arrived, st.Expired, st.Dropped, st.Rejected)
	}
	s.t.Fatalf("unknown directive %q", directive)
	return ""
}

func (s *specRun) state() string {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	var lines []string
	for k, q := range s.h.mu.queues {
		if len(q.reqs) == 0 {
			continue
		}
		var reqs []string
		for _, x := range q.reqs {
			reqs = append(reqs, fmt.Sprintf("offset=%d deadline=%v", x.Offset, x.deadline))
		}
		slices.Sort(reqs)
		lines = append(lines, fmt.Sprintf("%s@%d: %s", k.topic, k.queueID, strings.Join(reqs, "; ")))
	}
	slices.Sort(lines)
	if len(lines) == 0 {
		return "empty"
	}
	return strings.Join(lines, "\n")
}
