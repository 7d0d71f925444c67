package controller_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// TestCodeMap: every controller code the map calls served is answered by a
// controller (not REQUEST_CODE_NOT_SUPPORTED), even half-built.
func TestCodeMap(t *testing.T) {
	g := startGroup(t, 1, nil)
	g.leader()
	rc := remoting.NewClient(remoting.ClientConfig{})
	defer rc.Close()
	for _, row := range protocol.RequestCodeMap {
		if row.Side != protocol.SideController {
			continue
		}
		resp, err := rc.Invoke(ctx(t), g.nodes[0].ClientAddr(), remoting.NewRequest(row.Code, nil, nil))
		if err != nil {
			t.Fatalf("%d %s: %v", row.Code, row.Name, err)
		}
		notSupported := resp.Code == protocol.RequestCodeNotSupported &&
			strings.Contains(resp.Remark, " request type "+strconv.Itoa(int(row.Code))+" not supported")
		if served := row.Status == protocol.CodeServed; served == notSupported {
			t.Errorf("%d %s is %s in the map but answered %d %q", row.Code, row.Name, row.Status, resp.Code, resp.Remark)
		}
	}
}
