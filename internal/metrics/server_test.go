package metrics

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func startTestServer(t *testing.T, pprof bool) string {
	t.Helper()
	src, _ := testState()
	reg, err := NewRegistry(newTestCollector(src, nil, &fakeClock{t: time.UnixMilli(1_060_000)}))
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", Gatherer: reg, Pprof: pprof})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return s.Addr().String()
}

// raw sends req as bytes and returns the response's status code.
func raw(t *testing.T, addr, req string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() { _, _ = io.WriteString(c, req) }() // the server may answer before reading it all
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response to %.40q: %v", req, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestBadHTTPRefused: malformed, oversized and wrong requests get a 4xx,
// and the server goes on serving scrapes.
func TestBadHTTPRefused(t *testing.T) {
	addr := startTestServer(t, false)
	for _, c := range []struct {
		name string
		req  string
		want int
	}{
		{"malformed request line", "GARBAGE\r\n\r\n", http.StatusBadRequest},
		{"bad header", "GET /metrics HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", http.StatusBadRequest},
		{"huge header", "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 64<<10) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"huge body", "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n" + strings.Repeat("a", 4096), http.StatusRequestEntityTooLarge},
		{"wrong method", "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", http.StatusMethodNotAllowed},
		{"unknown path", "GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusNotFound},
		{"pprof off", "GET /debug/pprof/ HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := raw(t, addr, c.req); got != c.want {
				t.Errorf("status %d, want %d", got, c.want)
			}
		})
	}
	code, body := get(t, "http://"+addr+"/metrics")
	if code != http.StatusOK || !strings.Contains(body, "rocketmq_consumer_lag_messages{") {
		t.Fatalf("scrape after bad requests: %d\n%.300s", code, body)
	}
}

func TestPprofBehindFlag(t *testing.T) {
	addr := startTestServer(t, true)
	code, body := get(t, fmt.Sprintf("http://%s/debug/pprof/goroutine?debug=1", addr))
	if code != http.StatusOK || !strings.Contains(body, "goroutine profile") {
		t.Fatalf("pprof: %d %.200s", code, body)
	}
	// Not on the default mux: a server without pprof never serves it,
	// even though net/http/pprof is imported in this binary.
	if code, _ := get(t, "http://"+startTestServer(t, false)+"/debug/pprof/"); code != http.StatusNotFound {
		t.Fatalf("pprof served without the flag: %d", code)
	}
}

// TestSlowHeaderClosed: a client that never finishes its header is
// disconnected after the header timeout (5 s; shortened here), not kept.
func TestSlowHeaderClosed(t *testing.T) {
	reg, err := NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", Gatherer: reg})
	s.http.ReadHeaderTimeout = 200 * time.Millisecond
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close(context.Background()) }()
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n"); err != nil { // no final CRLF
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	_, err = io.ReadAll(c)
	if err != nil { // EOF is nil for ReadAll: the server closed it
		t.Fatalf("connection not closed by the server: %v", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("closed after %v", waited)
	}
}
