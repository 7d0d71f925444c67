package meta

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/vfs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testDir = "/store/config"

// testClock is a settable clock for DataVersion timestamps.
type testClock struct{ ms int64 }

func (c *testClock) now() time.Time { c.ms++; return time.UnixMilli(c.ms) }

func memOptions(fs vfs.FS) Options {
	clk := &testClock{ms: 1_700_000_000_000}
	return Options{Dir: testDir, FS: fs, Now: clk.now}
}

func testBrokerConfig() *config.BrokerConfig {
	c := config.NewBrokerConfig()
	c.BrokerIP1, c.BrokerIP2 = "127.0.0.1", "127.0.0.1"
	c.StorePathRootDir = "/store"
	c.EnsureDefaults()
	return &c
}

// installFixture copies testdata/<fixture> to name in the config dir of fs.
func installFixture(t *testing.T, fs vfs.FS, fixture, name string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	writeRaw(t, fs, filepath.Join(testDir, name), data)
}

func writeRaw(t *testing.T, fs vfs.FS, path string, data []byte) {
	t.Helper()
	// Durable, like a file a broker wrote before a clean stop.
	if err := vfs.MkdirAllSync(fs, filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
}

func readRaw(t *testing.T, fs vfs.FS, path string) string {
	t.Helper()
	data, err := vfs.ReadFile(fs, path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
