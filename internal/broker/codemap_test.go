package broker_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/protocol"
)

// TestRequestCodeMap checks protocol.RequestCodeMap against what the broker
// and the NameServer answer, and sends each of Java's request codes
// half-built (no header, no body) to both: a served code is answered by its
// handler, any other code REQUEST_CODE_NOT_SUPPORTED with Java's remark
// (and the map's reason for a code refused on purpose); neither server
// crashes or leaves the client hanging.
func TestRequestCodeMap(t *testing.T) {
	c := startCluster(t, nil)
	servers := []struct {
		name string
		addr string
		side protocol.CodeSide
	}{
		{"broker", c.b.Addr(), protocol.SideBroker},
		{"namesrv", c.nsAddr, protocol.SideNameServer},
	}
	for _, row := range protocol.RequestCodeMap {
		for _, s := range servers {
			resp := c.invoke(s.addr, row.Code, nil, nil)
			notSupported := resp.Code == protocol.RequestCodeNotSupported &&
				strings.Contains(resp.Remark, " request type "+strconv.Itoa(int(row.Code))+" not supported")
			served := row.Side == s.side && row.Status == protocol.CodeServed
			switch {
			case served && notSupported:
				t.Errorf("%s: %d %s is %s in the map but answered %d %q", s.name, row.Code, row.Name, row.Status, resp.Code, resp.Remark)
			case !served && !notSupported:
				t.Errorf("%s: %d %s is %s (%s side) in the map but answered %d %q, not REQUEST_CODE_NOT_SUPPORTED",
					s.name, row.Code, row.Name, row.Status, row.Side, resp.Code, resp.Remark)
			case s.side == protocol.SideBroker && row.Status == protocol.CodeRefused && !strings.Contains(resp.Remark, row.Note):
				t.Errorf("%s: %d %s refused without the reason: %q", s.name, row.Code, row.Name, resp.Remark)
			}
		}
	}
	// Both still serve.
	c.createTopic(uniq(t, "CodeMapAfter"), 1)
}
