package remoting

import (
	"context"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/rocketd/rocketd/internal/protocol"
)

// getAllTopicListFromNameServer is RequestCode 206 (spec §2.1).
const getAllTopicListFromNameServer = 206

// TestGoClientInterop runs the official Go client's admin against a Server:
// our decoder must read its request and it must accept our response.
func TestGoClientInterop(t *testing.T) {
	rlog.SetLogLevel("fatal")
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	got := make(chan *Command, 1)
	s.Handle(getAllTopicListFromNameServer, nil, func(_ *Conn, req *Command) *Command {
		got <- req
		resp := NewResponse(protocol.Success, "")
		resp.Body = []byte(`{"topicList":["TopicTest","%RETRY%G"],"brokerAddr":"127.0.0.1:10911"}`)
		resp.ExtFields = map[string]string{"note": "ext fields must be strings"}
		return resp
	})
	addr := startServer(t, s)

	adm, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver([]string{addr})))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := adm.FetchAllTopicList(ctx)
	if err != nil {
		t.Fatalf("Go client rejected our response: %v", err)
	}
	if len(list.TopicList) != 2 || list.TopicList[0] != "TopicTest" {
		t.Fatalf("Go client read %+v", list)
	}
	req := <-got
	if req.Language != GO || req.SerializeType != JSON || req.IsResponse() || req.IsOneway() {
		t.Fatalf("decoded the Go client's request as %+v", req)
	}
}
