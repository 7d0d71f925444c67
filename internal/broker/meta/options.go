package meta

import (
	"errors"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/vfs"
)

// The config files below Options.Dir (rocketmq-spec.md §6.1, §6.5).
const (
	TopicsFile            = "topics.json"
	SubscriptionGroupFile = "subscriptionGroup.json"
	ConsumerOffsetFile    = "consumerOffset.json"
	DelayOffsetFile       = "delayOffset.json"
	RequestModeFile       = "messageRequestMode.json"
)

// ConfigDir is the config directory of a store root: <storePathRootDir>/config.
func ConfigDir(storeRoot string) string { return filepath.Join(storeRoot, "config") }

// Options are what every table of this package needs.
type Options struct {
	// Dir is the config directory, ConfigDir(storePathRootDir). Required.
	Dir string
	// FS holds the files. Default vfs.Default.
	FS vfs.FS
	// Logger receives events. Default: discard.
	Logger *slog.Logger
	// Now is the clock of DataVersion timestamps. Default time.Now.
	Now func() time.Time
}

func (o *Options) ensureDefaults() error {
	if o.Dir == "" {
		return errors.New("meta: Options.Dir is empty")
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

func (o *Options) file(name string) *configFile {
	return &configFile{fs: o.FS, path: filepath.Join(o.Dir, name), log: o.Logger}
}

// newDataVersion is Java's new DataVersion(): now, counter 0.
func newDataVersion(now time.Time) protocol.DataVersion {
	return protocol.DataVersion{Timestamp: now.UnixMilli()}
}

// nextVersion is Java's DataVersion.nextVersion: timestamp now, counter+1.
func nextVersion(d *protocol.DataVersion, now time.Time) {
	d.Timestamp = now.UnixMilli()
	d.Counter++
}
