package message

// Scanner walks the records of a buffer back to back, for recovery and for
// the dispatcher. It stops at the first position that does not hold a good
// record and says why (Err):
//
//	nil           the buffer ended exactly at a record boundary
//	ErrBlank      the end-of-file filler: continue with the next segment
//	ErrZeroed     zeros: the end of the written data in a preallocated segment
//	ErrTruncated  the buffer ends inside a record: read more and scan again
//	              from Pos, or, at the end of a segment, a torn tail
//	ErrCorrupt    bad magic, impossible length or CRC mismatch (wrapped)
//
// Pos is then where the good data ends: recovery truncates there. A Scanner
// never reads past its buffer. The zero value is ready after Reset.
//
//	var sc message.Scanner
//	sc.CheckCRC = true
//	sc.Reset(buf)
//	for sc.Next() {
//		rec := sc.Record() // valid until the next call to Next
//		...
//	}
//	end, why := sc.Pos(), sc.Err()
type Scanner struct {
	// CheckCRC verifies each body checksum (recovery: yes; dispatch: no).
	CheckCRC bool
	// NoCopy makes Record's Topic and Properties alias the buffer (no
	// allocation per record; see DecodeRecordNoCopy for the lifetime rule).
	// Body always aliases the buffer.
	NoCopy bool

	buf     []byte
	pos     int
	recPos  int
	recSize int
	rec     Record
	err     error
}

// NewScanner returns a Scanner over buf.
func NewScanner(buf []byte, checkCRC bool) *Scanner {
	s := &Scanner{CheckCRC: checkCRC}
	s.Reset(buf)
	return s
}

// Reset starts scanning buf from its first byte.
func (s *Scanner) Reset(buf []byte) {
	s.buf, s.pos, s.recPos, s.recSize, s.rec, s.err = buf, 0, 0, 0, Record{}, nil
}

// Next decodes the next record and reports whether there was one.
func (s *Scanner) Next() bool {
	if s.err != nil || s.pos >= len(s.buf) {
		return false
	}
	rec, n, err := decodeRecord(s.buf[s.pos:], s.CheckCRC, s.NoCopy)
	if err != nil {
		s.err = err
		s.rec = Record{}
		return false
	}
	s.rec, s.recPos, s.recSize = rec, s.pos, n
	s.pos += n
	return true
}

// Record returns the current record; it stays valid until the next call to
// Next or Reset (its slices alias the buffer).
func (s *Scanner) Record() *Record { return &s.rec }

// Offset is the position of the current record in the buffer.
func (s *Scanner) Offset() int { return s.recPos }

// Size is the size (TOTALSIZE) of the current record.
func (s *Scanner) Size() int { return s.recSize }

// Bytes returns the encoded bytes of the current record (aliasing the buffer).
func (s *Scanner) Bytes() []byte { return s.buf[s.recPos : s.recPos+s.recSize] }

// Pos is the position just after the last good record: where the next
// record starts, or, once Next has returned false, where good data ends.
func (s *Scanner) Pos() int { return s.pos }

// Err is why scanning stopped (nil if the buffer ended at a record boundary).
func (s *Scanner) Err() error { return s.err }
