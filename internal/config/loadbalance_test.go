package config

import (
	"strings"
	"testing"
)

// TestLoadBalanceKeys: litePullMessageEnable, serverLoadBalancerEnable,
// defaultMessageRequestMode and defaultPopShareQueueNum default as
// BrokerConfig 5.x, bind under Java's names (the mode in any case, as
// brokerRole), and a mode Java's valueOf refuses is refused with the key
// named.
func TestLoadBalanceKeys(t *testing.T) {
	c, unknown, err := BrokerConfigFromProperties(Properties{})
	if err != nil || len(unknown) != 0 {
		t.Fatal(err, unknown)
	}
	if !c.LitePullMessageEnable || !c.ServerLoadBalancerEnable || c.DefaultMessageRequestMode != "PULL" || c.DefaultPopShareQueueNum != -1 {
		t.Fatalf("defaults: %v %v %q %d", c.LitePullMessageEnable, c.ServerLoadBalancerEnable, c.DefaultMessageRequestMode, c.DefaultPopShareQueueNum)
	}
	c, unknown, err = BrokerConfigFromProperties(Properties{
		"litePullMessageEnable": "false", "serverLoadBalancerEnable": "false",
		"defaultMessageRequestMode": "pop", "defaultPopShareQueueNum": "2",
	})
	if err != nil || len(unknown) != 0 {
		t.Fatal(err, unknown)
	}
	if c.LitePullMessageEnable || c.ServerLoadBalancerEnable || c.DefaultMessageRequestMode != "POP" || c.DefaultPopShareQueueNum != 2 {
		t.Fatalf("bound: %v %v %q %d", c.LitePullMessageEnable, c.ServerLoadBalancerEnable, c.DefaultMessageRequestMode, c.DefaultPopShareQueueNum)
	}
	if _, _, err := BrokerConfigFromProperties(Properties{"defaultMessageRequestMode": "PUSH"}); err == nil || !strings.Contains(err.Error(), "defaultMessageRequestMode") {
		t.Fatalf("bad mode: %v", err)
	}
}
