package broker

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/rocketd/rocketd/internal/metrics"
	"github.com/rocketd/rocketd/internal/vfs"
)

// TransactionMetricsFile keeps rocketmq_half_messages' counts across
// restarts, under the config directory: Java's TransactionMetrics file
// (BrokerPathConfigHelper.getTransactionMetricsPath) and JSON form. It is
// read at start and written every transactionMetricFlushInterval (10 s;
// Java's TransactionMetricsFlushService) and at a clean close. After a
// crash the saved counts miss what changed in the last interval (Java
// keeps that error for good); rocketd rebuilds them instead, before
// serving, from the half and op queues (txn.Service.CountLive: the half
// messages the check-back still considers open), and keeps the saved
// ones only if that read fails.
const TransactionMetricsFile = "transactionMetrics"

type txnMetricsFile struct {
	TransactionCount map[string]txnMetric `json:"transactionCount"`
	DataVersion      txnDataVersion       `json:"dataVersion"`
}

type txnMetric struct {
	Count     int64 `json:"count"`
	TimeStamp int64 `json:"timeStamp"`
}

type txnDataVersion struct {
	Counter      int64 `json:"counter"`
	StateVersion int64 `json:"stateVersion"`
	Timestamp    int64 `json:"timestamp"`
}

// loadTxnMetrics adds the saved half-message counts to e. A missing file
// is no counts; an unreadable one is reported and ignored (a statistic
// never stops the broker).
func loadTxnMetrics(fsys vfs.FS, dir string, e *metrics.Events) error {
	if e == nil {
		return nil
	}
	data, err := vfs.ReadFile(fsys, filepath.Join(dir, TransactionMetricsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("broker: read %s: %w", TransactionMetricsFile, err)
	}
	var f txnMetricsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("broker: parse %s: %w", TransactionMetricsFile, err)
	}
	for topic, m := range f.TransactionCount {
		e.AddHalf(topic, m.Count)
	}
	return nil
}

// saveTxnMetrics writes e's half-message counts (replaced by rename).
func saveTxnMetrics(fsys vfs.FS, dir string, e *metrics.Events) error {
	if e == nil {
		return nil
	}
	now := time.Now().UnixMilli()
	f := txnMetricsFile{TransactionCount: map[string]txnMetric{}, DataVersion: txnDataVersion{Timestamp: now}}
	for topic, n := range e.HalfCounts() {
		f.TransactionCount[topic] = txnMetric{Count: n, TimeStamp: now}
	}
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("broker: encode %s: %w", TransactionMetricsFile, err)
	}
	tmp := filepath.Join(dir, TransactionMetricsFile+".tmp")
	w, err := fsys.Create(tmp)
	if err != nil {
		return fmt.Errorf("broker: create %s: %w", TransactionMetricsFile, err)
	}
	_, werr := w.WriteAt(data, 0)
	serr := w.Sync()
	cerr := w.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("broker: write %s: %w", TransactionMetricsFile, err)
	}
	if err := fsys.Rename(tmp, filepath.Join(dir, TransactionMetricsFile)); err != nil {
		return fmt.Errorf("broker: rename %s: %w", TransactionMetricsFile, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("broker: sync %s's directory: %w", TransactionMetricsFile, err)
	}
	return nil
}
