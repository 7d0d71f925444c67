package remoting

import (
	"context"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// startServer starts s (configured by the caller) and shuts it down when the
// test ends.
func startServer(t *testing.T, s *Server) string {
	t.Helper()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s.Addr().String()
}

func newClient(t *testing.T, cfg ClientConfig) *Client {
	t.Helper()
	c := NewClient(cfg)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// echoHandler answers with the request's ext fields and body.
func echoHandler(_ *Conn, req *Command) *Command {
	resp := NewResponse(protocol.Success, "ok")
	resp.ExtFields = req.ExtFields
	resp.Body = req.Body
	return resp
}

func TestInvokeRoundTrip(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	fam := s.NewFamily("echo", 2, 16)
	s.Handle(protocol.SendMessage, fam, echoHandler)
	s.Handle(protocol.HeartBeat, nil, echoHandler)
	addr := startServer(t, s)
	c := newClient(t, ClientConfig{})
	for _, st := range []SerializeType{JSON, RocketMQ} {
		for _, code := range []int32{protocol.SendMessage, protocol.HeartBeat} {
			req := NewRequest(code, map[string]string{"topic": "T"}, []byte("body"))
			req.SerializeType = st
			resp, err := c.Invoke(ctxTimeout(t, 5*time.Second), addr, req)
			if err != nil {
				t.Fatal(err)
			}
			if !resp.IsResponse() || resp.Code != protocol.Success || resp.Remark != "ok" ||
				resp.ExtFields["topic"] != "T" || string(resp.Body) != "body" || resp.Opaque != req.Opaque {
				t.Fatalf("bad response %+v to %+v", resp, req)
			}
			// The response travels in the request's serialization.
			if resp.SerializeType != st {
				t.Fatalf("response serialization %v, request %v", resp.SerializeType, st)
			}
		}
	}
}
