package configcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
)

func TestUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "namesrv.properties")
	var c config.NamesrvConfig
	c.EnsureDefaults()
	rt := config.NewNamesrvRuntime(&c, path)
	var logged []config.Properties
	log := func(p config.Properties) { logged = append(logged, p) }
	for _, tc := range []struct {
		body   string
		code   int32
		remark string
	}{
		{"", protocol.Success, ""},
		{"orderMessageEnable=true\n", protocol.Success, ""},
		{"kvConfigPath=/tmp/x", protocol.NoPermission, "black list"},
		{"listenPort=1", protocol.NoPermission, "listenPort"},
		{"bogus=1", protocol.NoPermission, "bogus"},
		{"brokerChannelExpiredTime=-1", protocol.InvalidParameter, "brokerChannelExpiredTime"},
		{"orderMessageEnable=\\u12", protocol.SystemError, "string2Properties error"},
	} {
		resp := Update(rt, []byte(tc.body), log)
		if resp.Code != tc.code || !strings.Contains(resp.Remark, tc.remark) {
			t.Errorf("%q: %d %q, want %d containing %q", tc.body, resp.Code, resp.Remark, tc.code, tc.remark)
		}
	}
	if len(logged) != 1 || logged[0]["orderMessageEnable"] != "true" {
		t.Errorf("logged %v, want the one applied update", logged)
	}
	if raw, err := os.ReadFile(path); err != nil || !strings.Contains(string(raw), "orderMessageEnable=true") {
		t.Errorf("persisted %q %v", raw, err)
	}
}
