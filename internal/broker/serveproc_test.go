package broker_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rocketd/rocketd/internal/testutil/proc"
)

// serveProc is what the kill -9 tests need to run `rocketd serve` as a
// child process, and again on the same data: the binary, free ports, the
// data directory and the command line.
type serveProc struct {
	bin                    string
	nsAddr, addr, grpcAddr string
	dir, data              string
	args                   []string
}

// newServeProc builds rocketd and writes a broker.conf of small segments
// plus extraConf (lines ending in \n).
func newServeProc(t *testing.T, extraConf string) serveProc {
	t.Helper()
	nsPort := proc.FreePort(t)
	brokerPort := proc.FreeBrokerPort(t, nsPort)
	grpcPort := proc.FreePort(t)
	s := serveProc{
		bin:      proc.Build(t, "github.com/rocketd/rocketd/cmd/rocketd"),
		nsAddr:   "127.0.0.1:" + strconv.Itoa(nsPort),
		addr:     "127.0.0.1:" + strconv.Itoa(brokerPort),
		grpcAddr: "127.0.0.1:" + strconv.Itoa(grpcPort),
		dir:      t.TempDir(),
	}
	conf := filepath.Join(s.dir, "broker.conf")
	text := "brokerIP1=127.0.0.1\nmapedFileSizeCommitLog=16777216\nmappedFileSizeConsumeQueue=60000\n" + extraConf
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s.data = filepath.Join(s.dir, "data")
	s.args = []string{"serve", "--data", s.data, "--namesrv-port", strconv.Itoa(nsPort),
		"--listen-port", strconv.Itoa(brokerPort), "--grpc-port", strconv.Itoa(grpcPort), "-c", conf}
	return s
}
