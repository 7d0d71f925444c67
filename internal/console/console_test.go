package console

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestChartRates(t *testing.T) {
	t0 := time.UnixMilli(1_000_000)
	info := func(put, total, off string) map[string]string {
		m := map[string]string{"commitLogMaxOffset": off}
		if put != "" {
			m["putTps"], m["getTransferedTps"] = put, "2.5 1 1"
		}
		if total != "" {
			m["msgPutTotalTodayNow"] = total
		}
		return m
	}
	// Offsets only: put from msgPutTotalTodayNow deltas, bytes from offsets.
	h := []sample{parseSample(t0, info("", "10", "1000")), parseSample(t0.Add(2*time.Second), info("", "30", "5000"))}
	sr := chart("b", h)
	if sr.Source != "delta" || len(sr.Points) != 1 || sr.Points[0].Put != 10 || sr.Points[0].Bytes != 2000 || sr.Points[0].Get != -1 {
		t.Fatalf("delta chart: %+v", sr)
	}
	// A put counter stuck at 0 while the CommitLog grows is not a rate.
	h = []sample{parseSample(t0, info("", "0", "0")), parseSample(t0.Add(time.Second), info("", "0", "100"))}
	if sr = chart("b", h); sr.Points[0].Put != -1 || sr.Points[0].Bytes != 100 {
		t.Fatalf("stuck counter chart: %+v", sr)
	}
	// The get counter gives the get rate.
	g := info("", "10", "0")
	g["msgGetTotalTodayNow"] = "4"
	g2 := info("", "10", "0")
	g2["msgGetTotalTodayNow"] = "10"
	if sr = chart("b", []sample{parseSample(t0, g), parseSample(t0.Add(2*time.Second), g2)}); sr.Points[0].Get != 3 || sr.Points[0].Put != 0 {
		t.Fatalf("get counter chart: %+v", sr)
	}
	// No counters at all: put unknown, bytes still derived.
	h = []sample{parseSample(t0, info("", "", "0")), parseSample(t0.Add(time.Second), info("", "", "100"))}
	if sr = chart("b", h); sr.Points[0].Put != -1 || sr.Points[0].Bytes != 100 {
		t.Fatalf("bare chart: %+v", sr)
	}
	// The broker's TPS win when present (first of Java's three windows).
	h = []sample{parseSample(t0, info("7.5 3 1", "0", "0")), parseSample(t0.Add(time.Second), info("8.25 3 1", "0", "10"))}
	if sr = chart("b", h); sr.Source != "tps" || sr.Points[0].Put != 8.25 || sr.Points[0].Get != 2.5 {
		t.Fatalf("tps chart: %+v", sr)
	}
	// A counter reset (a new day) yields no negative rate.
	h = []sample{parseSample(t0, info("", "50", "100")), parseSample(t0.Add(time.Second), info("", "3", "50"))}
	if sr = chart("b", h); sr.Points[0].Put != -1 || sr.Points[0].Bytes != 0 {
		t.Fatalf("reset chart: %+v", sr)
	}
}

func TestSamplerKeepsBoundedHistory(t *testing.T) {
	s := newSampler(nil, time.Second, nil)
	for i := range samplesKept + 10 {
		s.add("b", sample{at: time.UnixMilli(int64(i) * 1000), commitLogMaxOffset: int64(i)})
	}
	if got := len(s.series()[0].Points); got != samplesKept-1 {
		t.Fatalf("%d points, want %d", got, samplesKept-1)
	}
}

func TestCheckWrite(t *testing.T) {
	req := func(method string, hdr map[string]string) *http.Request {
		r := httptest.NewRequestWithContext(context.Background(), method, "http://127.0.0.1:8082/api/topics", strings.NewReader("{}"))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set(writeHeader, "1")
		for k, v := range hdr {
			if v == "" {
				r.Header.Del(k)
			} else {
				r.Header.Set(k, v)
			}
		}
		return r
	}
	for _, tc := range []struct {
		name   string
		method string
		hdr    map[string]string
		want   int
	}{
		{"ok", http.MethodPost, nil, 0},
		{"same origin", http.MethodPost, map[string]string{"Origin": "http://127.0.0.1:8082", "Sec-Fetch-Site": "same-origin"}, 0},
		{"GET", http.MethodGet, nil, http.StatusMethodNotAllowed},
		{"text/plain", http.MethodPost, map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType},
		{"no header", http.MethodPost, map[string]string{writeHeader: ""}, http.StatusForbidden},
		{"other port", http.MethodPost, map[string]string{"Origin": "http://127.0.0.1:9999"}, http.StatusForbidden},
		{"same-site", http.MethodPost, map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
	} {
		if got, reason := checkWrite(req(tc.method, tc.hdr)); got != tc.want {
			t.Errorf("%s: %d (%s), want %d", tc.name, got, reason, tc.want)
		}
	}
}

func TestHostAllowed(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:8082": true, "localhost:8082": true, "[::1]:8082": true, "10.0.0.1": true,
		"evil.example:8082": false, "127.0.0.1.nip.io:8082": false,
	} {
		if hostAllowed(host) != want {
			t.Errorf("hostAllowed(%q) = %v", host, !want)
		}
	}
	if !isLoopbackListen("127.0.0.1:0") || isLoopbackListen("0.0.0.0:8082") || isLoopbackListen(":8082") {
		t.Error("isLoopbackListen")
	}
}
