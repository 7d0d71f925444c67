package store

import (
	"slices"

	"github.com/rocketd/rocketd/internal/store/index"
)

// QueryResult is what QueryMessage found: the stored records, concatenated
// as QUERY_MESSAGE's body carries them, and the index's newest position.
type QueryResult struct {
	Records                  []byte
	Count                    int
	IndexLastUpdateTimestamp int64
	IndexLastUpdatePhyOffset int64
}

// QueryMessage returns the records indexed under topic#key (KEYS entry or
// UNIQ_KEY) stored in [begin, end], at most min(maxNum, MaxMsgsNumBatch),
// oldest offset first (Java's DefaultMessageStore.queryMessage). A hash
// hit is a candidate only: the records may carry other keys (the client
// filters, as Java's does). Records that cannot be read (retention removed
// them) are left out.
func (s *Store) QueryMessage(topic, key string, maxNum int, begin, end int64) (QueryResult, error) {
	var r QueryResult
	if s.closed.Load() {
		return r, ErrClosed
	}
	maxNum = min(maxNum, s.cfg.MaxMsgsNumBatch)
	last := end
	// Java tries three times, moving the end before the oldest hit, when
	// none of the hits could be read.
	for try := 0; try < 3; try++ {
		found, err := s.idx.Query(topic, key, maxNum, begin, last)
		if err != nil {
			s.cfg.Logger.Error("store: query index", "topic", topic, "key", key, "err", err)
		}
		if len(found.Offsets) == 0 {
			break
		}
		slices.Sort(found.Offsets)
		r.IndexLastUpdateTimestamp, r.IndexLastUpdatePhyOffset = found.LastUpdateTimestamp, found.LastUpdatePhyOffset
		for i, off := range found.Offsets {
			rec, buf, err := s.log.ReadRecordAt(off)
			if err != nil {
				continue
			}
			if i == 0 {
				last = rec.StoreTimestamp
			}
			r.Records = append(r.Records, buf.Bytes...)
			r.Count++
			buf.Release()
		}
		if r.Count > 0 || last < begin {
			break
		}
	}
	return r, nil
}

// IndexFiles describes the key index files, oldest first.
func (s *Store) IndexFiles() []index.FileInfo { return s.idx.Files() }
