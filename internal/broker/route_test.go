package broker_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// closingNamesrv is a NameServer that closes the connections of its first
// `closes` GET_ROUTEINFO_BY_TOPIC requests without answering (as one whose
// idle timeout fired just as the request arrived), then answers the route.
type closingNamesrv struct {
	srv      *remoting.Server
	requests atomic.Int32
	conns    sync.Map // *remoting.Conn seen
	closes   int32
}

func startClosingNamesrv(t *testing.T, closes int32) *closingNamesrv {
	t.Helper()
	ns := &closingNamesrv{srv: remoting.NewServer(remoting.ServerConfig{Addr: "127.0.0.1:0"}), closes: closes}
	route := protocol.TopicRouteData{
		QueueDatas:  []protocol.QueueData{{BrokerName: "b", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}},
		BrokerDatas: []protocol.BrokerData{{Cluster: "c", BrokerName: "b", BrokerAddrs: map[int64]string{0: "127.0.0.1:10911"}}},
	}
	body := route.MarshalFastJSON(protocol.JSONStandard)
	ns.srv.Handle(protocol.GetRouteinfoByTopic, nil, func(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
		ns.conns.Store(conn, true)
		if ns.requests.Add(1) <= ns.closes {
			_ = conn.Close()
			return nil
		}
		resp := remoting.NewResponse(protocol.Success, "")
		resp.Body = body
		return resp
	})
	if err := ns.srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ns.srv.Shutdown(ctx)
	})
	return ns
}

func (ns *closingNamesrv) connCount() int {
	n := 0
	ns.conns.Range(func(any, any) bool { n++; return true })
	return n
}

// TestRouteRetriesBrokenNamesrvConnection: the NameServer closes the
// connection of the first request; the lookup sends it again on a fresh
// connection and returns the route (before: "namesrv ...: remoting:
// connection closed", seen by gRPC QueryRoute under load).
func TestRouteRetriesBrokenNamesrvConnection(t *testing.T) {
	ns := startClosingNamesrv(t, 1)
	client := remoting.NewClient(remoting.ClientConfig{})
	defer client.Close()
	route, found, err := broker.RouteFromNamesrv(context.Background(), client, []string{ns.srv.Addr().String()}, "T")
	if err != nil || !found {
		t.Fatalf("route after a broken connection: found %v, err %v", found, err)
	}
	if len(route.QueueDatas) != 1 || route.QueueDatas[0].BrokerName != "b" {
		t.Fatalf("route %+v", route)
	}
	if n, c := ns.requests.Load(), ns.connCount(); n != 2 || c != 2 {
		t.Fatalf("%d requests on %d connections, want 2 on 2 (one retry, on a fresh connection)", n, c)
	}
}

// TestRouteRetryIsBounded: a NameServer that breaks every connection gets
// the request twice, not forever; the error names it.
func TestRouteRetryIsBounded(t *testing.T) {
	ns := startClosingNamesrv(t, 1000)
	client := remoting.NewClient(remoting.ClientConfig{})
	defer client.Close()
	addr := ns.srv.Addr().String()
	_, found, err := broker.RouteFromNamesrv(context.Background(), client, []string{addr}, "T")
	if err == nil || found || !errors.Is(err, remoting.ErrConnClosed) {
		t.Fatalf("found %v, err %v; want a connection-closed error", found, err)
	}
	if n := ns.requests.Load(); n != 2 {
		t.Fatalf("%d requests to a NameServer that breaks every connection, want 2", n)
	}
}

// TestRouteNextNamesrvAfterBrokenOnes: with two NameServers, the first
// breaking every connection, the route comes from the second.
func TestRouteNextNamesrvAfterBrokenOnes(t *testing.T) {
	bad := startClosingNamesrv(t, 1000)
	good := startClosingNamesrv(t, 0)
	client := remoting.NewClient(remoting.ClientConfig{})
	defer client.Close()
	_, found, err := broker.RouteFromNamesrv(context.Background(), client, []string{bad.srv.Addr().String(), good.srv.Addr().String()}, "T")
	if err != nil || !found {
		t.Fatalf("found %v, err %v", found, err)
	}
	if n, m := bad.requests.Load(), good.requests.Load(); n != 2 || m != 1 {
		t.Fatalf("requests: %d to the broken NameServer (want 2), %d to the good one (want 1)", n, m)
	}
}
