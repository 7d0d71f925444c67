package auth

import (
	"context"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// TestGuardOnServer runs the Authenticator as a server's guard: requests
// whose handler reads the header lazily (compact form, both
// serializations) and map-form requests are checked alike, a refusal is
// NO_PERMISSION with the reason, and the handler never sees it.
func TestGuardOnServer(t *testing.T) {
	users := memUsers(t, User{Username: "app", Password: "app-secret"})
	srv := remoting.NewServer(remoting.ServerConfig{Addr: "127.0.0.1:0"})
	handled := make(chan int32, 16)
	echo := func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
		handled <- req.Code
		return remoting.NewResponse(protocol.Success, "")
	}
	srv.HandleLazyExt(10, nil, echo)
	srv.Handle(26, nil, echo)
	srv.SetGuard(NewAuthenticator(users, nil, nil).Guard)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	addr := srv.Addr().String()
	newClient := func(creds *Credentials) *remoting.Client {
		cfg := remoting.ClientConfig{}
		if creds != nil {
			cfg.BeforeRequest = creds.Sign
		}
		c := remoting.NewClient(cfg)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	good := newClient(&Credentials{AccessKey: "app", SecretKey: "app-secret"})
	bad := newClient(&Credentials{AccessKey: "app", SecretKey: "guess"})
	anon := newClient(nil)

	call := func(c *remoting.Client, code int32, st remoting.SerializeType) *remoting.Command {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req := remoting.NewRequest(code, map[string]string{"topic": "T", "queueId": "2"}, []byte("payload"))
		req.SerializeType = st
		resp, err := c.Invoke(ctx, addr, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, st := range []remoting.SerializeType{remoting.JSON, remoting.RocketMQ} {
		for _, code := range []int32{10, 26} {
			if resp := call(good, code, st); resp.Code != protocol.Success {
				t.Fatalf("%v code %d signed: %d %q", st, code, resp.Code, resp.Remark)
			}
			if got := <-handled; got != code {
				t.Fatalf("handled %d", got)
			}
			if resp := call(bad, code, st); resp.Code != protocol.NoPermission || resp.Remark != remarkBadSignature {
				t.Fatalf("%v code %d wrong secret: %d %q", st, code, resp.Code, resp.Remark)
			}
			if resp := call(anon, code, st); resp.Code != protocol.NoPermission || resp.Remark != remarkNoUser {
				t.Fatalf("%v code %d unsigned: %d %q", st, code, resp.Code, resp.Remark)
			}
		}
	}
	select {
	case code := <-handled:
		t.Fatalf("a refused request (code %d) reached its handler", code)
	default:
	}

	// A refused oneway request gets no answer and no handler: the signed
	// request after it on the same connection is the next one handled
	// (inline handlers run in arrival order).
	if err := anon.InvokeOneway(addr, remoting.NewRequest(10, map[string]string{"topic": "T"}, nil)); err != nil {
		t.Fatal(err)
	}
	if err := good.InvokeOneway(addr, remoting.NewRequest(10, map[string]string{"topic": "T"}, nil)); err != nil {
		t.Fatal(err)
	}
	if resp := call(anon, 26, remoting.JSON); resp.Code != protocol.NoPermission {
		t.Fatalf("after oneway: %d", resp.Code)
	}
	if resp := call(good, 26, remoting.JSON); resp.Code != protocol.Success {
		t.Fatalf("signed after oneway: %d %q", resp.Code, resp.Remark)
	}
	for _, want := range []int32{10, 26} {
		if got := <-handled; got != want {
			t.Fatalf("handled %d, want %d (a refused oneway reached its handler?)", got, want)
		}
	}
	select {
	case code := <-handled:
		t.Fatalf("extra request %d handled", code)
	default:
	}
}
