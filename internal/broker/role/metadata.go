package role

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocketd/rocketd/internal/vfs"
)

// BrokerIdentityFile is where a broker in controller mode keeps the
// brokerId the controller gave it, under storePathRootDir, as Java's
// MessageStoreConfig.getStorePathBrokerIdentity; the temp file (the id
// applied for, with its registerCheckCode) is the same path plus "-temp".
const BrokerIdentityFile = "brokerIdentity"

// BrokerMetadata is Java's BrokerMetadata file (store/ha/autoswitch):
// "clusterName#brokerName#brokerId", no newline. A restart, or a broker
// whose IP changed, keeps the id it holds.
type BrokerMetadata struct {
	ClusterName, BrokerName string
	BrokerID                int64
}

// TempBrokerMetadata is Java's TempBrokerMetadata file: the id a broker
// applies for and its registerCheckCode ("brokerAddr;unixMillis"), which
// APPLY_BROKER_ID must see again when the broker applies a second time
// (a crash between the apply and the metadata file):
// "clusterName#brokerName#brokerId#registerCheckCode".
type TempBrokerMetadata struct {
	BrokerMetadata
	RegisterCheckCode string
}

func (m BrokerMetadata) encode() string {
	return m.ClusterName + "#" + m.BrokerName + "#" + strconv.FormatInt(m.BrokerID, 10)
}

func (m TempBrokerMetadata) encode() string {
	return m.BrokerMetadata.encode() + "#" + m.RegisterCheckCode
}

// decodeMetadata parses "cluster#name#id[#code]" with want fields.
func decodeMetadata(s string, want int) (TempBrokerMetadata, error) {
	parts := strings.Split(s, "#")
	if len(parts) < want || parts[0] == "" || parts[1] == "" {
		return TempBrokerMetadata{}, fmt.Errorf("want %d '#'-separated fields, got %q", want, s)
	}
	id, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return TempBrokerMetadata{}, fmt.Errorf("brokerId %q: %w", parts[2], err)
	}
	m := TempBrokerMetadata{BrokerMetadata: BrokerMetadata{ClusterName: parts[0], BrokerName: parts[1], BrokerID: id}}
	if want == 4 {
		// Java splits on every '#'; a check code is "addr;millis" and has none.
		m.RegisterCheckCode = parts[3]
		if m.RegisterCheckCode == "" {
			return TempBrokerMetadata{}, fmt.Errorf("empty registerCheckCode in %q", s)
		}
	}
	return m, nil
}

// metadataFiles reads and writes the two files of a store root.
type metadataFiles struct {
	fs   vfs.FS
	path string // the metadata file; the temp file is path + "-temp"
}

func newMetadataFiles(fsys vfs.FS, storeRoot string) metadataFiles {
	return metadataFiles{fs: fsys, path: filepath.Join(storeRoot, BrokerIdentityFile)}
}

func (f metadataFiles) tempPath() string { return f.path + "-temp" }

// read returns the file's text; ok is false when it does not exist.
func (f metadataFiles) read(path string) (string, bool, error) {
	b, err := vfs.ReadFile(f.fs, path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("broker: read %s: %w", path, err)
	}
	return string(b), true, nil
}

// Metadata returns the metadata file's content (ok false: none).
func (f metadataFiles) Metadata() (BrokerMetadata, bool, error) {
	s, ok, err := f.read(f.path)
	if !ok || err != nil {
		return BrokerMetadata{}, false, err
	}
	m, err := decodeMetadata(s, 3)
	if err != nil {
		return BrokerMetadata{}, false, fmt.Errorf("broker: %s: %w", f.path, err)
	}
	return m.BrokerMetadata, true, nil
}

// Temp returns the temp file's content (ok false: none).
func (f metadataFiles) Temp() (TempBrokerMetadata, bool, error) {
	s, ok, err := f.read(f.tempPath())
	if !ok || err != nil {
		return TempBrokerMetadata{}, false, err
	}
	m, err := decodeMetadata(s, 4)
	if err != nil {
		return TempBrokerMetadata{}, false, fmt.Errorf("broker: %s: %w", f.tempPath(), err)
	}
	return m, true, nil
}

// WriteTemp persists the id applied for (atomically: a crash leaves the
// old file or the new one).
func (f metadataFiles) WriteTemp(m TempBrokerMetadata) error {
	if err := vfs.WriteFileAtomic(f.fs, f.tempPath(), []byte(m.encode())); err != nil {
		return fmt.Errorf("broker: write %s: %w", f.tempPath(), err)
	}
	return nil
}

// ClearTemp removes the temp file (the id was refused, or is now in the
// metadata file).
func (f metadataFiles) ClearTemp() error {
	if err := f.fs.Remove(f.tempPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("broker: remove %s: %w", f.tempPath(), err)
	}
	return nil
}

// Commit writes the metadata file, then removes the temp file (Java's
// createMetadataFileAndDeleteTemp). A crash between the two leaves both;
// the metadata file wins at the next start.
func (f metadataFiles) Commit(m BrokerMetadata) error {
	if err := vfs.WriteFileAtomic(f.fs, f.path, []byte(m.encode())); err != nil {
		return fmt.Errorf("broker: write %s: %w", f.path, err)
	}
	return f.ClearTemp()
}

// check refuses a file written for another broker set (Java's
// checkMetadataValid): the operator renamed the broker or the cluster
// and must clear the file or undo the rename.
func (m BrokerMetadata) check(path, cluster, name string) error {
	if m.ClusterName != cluster || m.BrokerName != name {
		return fmt.Errorf("broker: %s names cluster %q broker %q, broker.conf cluster %q broker %q: "+
			"remove the file (the broker then asks the controller for a new brokerId) or fix broker.conf",
			path, m.ClusterName, m.BrokerName, cluster, name)
	}
	return nil
}
