package ha

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/rocketd/rocketd/internal/store"
)

// AutoSwitch protocol (RocketMQ 5's controller mode; doc.go, "AutoSwitch
// mode"). Every frame starts with the sender's connection state, the
// ordinal of Java's HAConnectionState.
const (
	stateReady     int32 = 0
	stateHandshake int32 = 1
	stateTransfer  int32 = 2
)

// Frame sizes (Java: AutoSwitchHAClient.HANDSHAKE_HEADER_SIZE,
// TRANSFER_HEADER_SIZE; AutoSwitchHAConnection.HANDSHAKE_HEADER_SIZE,
// TRANSFER_HEADER_SIZE, EPOCH_ENTRY_SIZE). Do not change: Java peers use
// them.
const (
	// SlaveHandshakeSize: state, isSyncFromLastFile, isAsyncLearner,
	// brokerId.
	SlaveHandshakeSize = 4 + 2 + 2 + 8
	// SlaveReportSize: state, the slave's CommitLog end.
	SlaveReportSize = 4 + 8
	// MasterHandshakeSize: state, body size, master's max offset, last
	// epoch; followed by the epoch entries.
	MasterHandshakeSize = 4 + 4 + 8 + 4
	// EpochEntrySize: epoch, start offset.
	EpochEntrySize = 4 + 8
	// TransferHeaderSize: state, body size, offset, epoch, epoch start
	// offset, confirm offset; followed by the data.
	TransferHeaderSize = MasterHandshakeSize + 8 + 8
	// MaxEpochEntries bounds the entries of a master's handshake a slave
	// accepts (Java's master holds at most 1000).
	MaxEpochEntries = 1 << 16
)

// ErrBadFrame: an AutoSwitch frame that cannot be right.
var ErrBadFrame = errors.New("ha: bad AutoSwitch frame")

// SlaveHandshake is the first frame of an AutoSwitch slave.
type SlaveHandshake struct {
	// SyncFromLastFile: an empty slave starts at the master's last
	// segment (syncFromLastFile); otherwise at its first offset.
	SyncFromLastFile bool
	// AsyncLearner: the slave never joins the SyncStateSet.
	AsyncLearner bool
	BrokerID     int64
}

func flag(b bool) uint16 {
	if b {
		return 1
	}
	return 0
}

// AppendTo appends the 16-byte encoding of h to dst.
func (h SlaveHandshake) AppendTo(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(stateHandshake))
	dst = binary.BigEndian.AppendUint16(dst, flag(h.SyncFromLastFile))
	dst = binary.BigEndian.AppendUint16(dst, flag(h.AsyncLearner))
	return binary.BigEndian.AppendUint64(dst, uint64(h.BrokerID))
}

// decodeSlaveHandshake decodes the 12 bytes after the state of a
// slave's handshake. Java reads a flag as set when it is 1.
func decodeSlaveHandshake(b []byte) SlaveHandshake {
	return SlaveHandshake{
		SyncFromLastFile: binary.BigEndian.Uint16(b) == 1,
		AsyncLearner:     binary.BigEndian.Uint16(b[2:]) == 1,
		BrokerID:         int64(binary.BigEndian.Uint64(b[4:])),
	}
}

// appendSlaveReport appends a slave's 12-byte offset report to dst.
func appendSlaveReport(dst []byte, offset int64) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(stateTransfer))
	return binary.BigEndian.AppendUint64(dst, uint64(offset))
}

// SlaveFrame is one frame a master reads from an AutoSwitch slave: a
// handshake, or (State stateTransfer) an offset report.
type SlaveFrame struct {
	State     int32
	Handshake SlaveHandshake
	Offset    int64
}

// slaveFrameSize is the size of the frame whose state is st, 0 for a
// state a slave never sends.
func slaveFrameSize(st int32) int {
	switch st {
	case stateHandshake:
		return SlaveHandshakeSize
	case stateTransfer:
		return SlaveReportSize
	}
	return 0
}

// DecodeSlaveFrame decodes the frame at the start of b and returns its
// size; a state other than HANDSHAKE or TRANSFER or a negative offset is
// ErrBadFrame, a short b io.ErrUnexpectedEOF-like ErrBadFrame.
func DecodeSlaveFrame(b []byte) (SlaveFrame, int, error) {
	if len(b) < 4 {
		return SlaveFrame{}, 0, fmt.Errorf("%w: %d bytes", ErrBadFrame, len(b))
	}
	st := int32(binary.BigEndian.Uint32(b))
	n := slaveFrameSize(st)
	if n == 0 {
		return SlaveFrame{}, 0, fmt.Errorf("%w: slave state %d", ErrBadFrame, st)
	}
	if len(b) < n {
		return SlaveFrame{}, 0, fmt.Errorf("%w: %d bytes, state %d needs %d", ErrBadFrame, len(b), st, n)
	}
	f := SlaveFrame{State: st}
	if st == stateHandshake {
		f.Handshake = decodeSlaveHandshake(b[4:])
		return f, n, nil
	}
	f.Offset = int64(binary.BigEndian.Uint64(b[4:]))
	if f.Offset < 0 {
		return SlaveFrame{}, 0, fmt.Errorf("%w: negative offset report %d", ErrBadFrame, f.Offset)
	}
	return f, n, nil
}

// MasterHandshake is a master's answer to a handshake: its CommitLog end,
// its last epoch and its epoch entries, oldest first.
type MasterHandshake struct {
	MaxOffset int64
	LastEpoch int32
	Entries   []store.EpochEntry // EndOffset is not sent
}

// AppendTo appends the 20-byte header and the entries to dst.
func (h MasterHandshake) AppendTo(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(stateHandshake))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(h.Entries)*EpochEntrySize))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.MaxOffset))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.LastEpoch))
	for _, e := range h.Entries {
		dst = binary.BigEndian.AppendUint32(dst, uint32(e.Epoch))
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.StartOffset))
	}
	return dst
}

// DecodeMasterHandshakeHeader decodes the 20-byte header and returns the
// body size that follows it: a multiple of EpochEntrySize, at most
// MaxEpochEntries entries; the state must be HANDSHAKE.
func DecodeMasterHandshakeHeader(b []byte) (h MasterHandshake, bodySize int, err error) {
	if len(b) < MasterHandshakeSize {
		return h, 0, fmt.Errorf("%w: handshake of %d bytes", ErrBadFrame, len(b))
	}
	st := int32(binary.BigEndian.Uint32(b))
	size := int32(binary.BigEndian.Uint32(b[4:]))
	h.MaxOffset = int64(binary.BigEndian.Uint64(b[8:]))
	h.LastEpoch = int32(binary.BigEndian.Uint32(b[16:]))
	switch {
	case st != stateHandshake:
		return MasterHandshake{}, 0, fmt.Errorf("%w: master state %d, want HANDSHAKE (%d)", ErrBadFrame, st, stateHandshake)
	case size < 0 || size%EpochEntrySize != 0 || size > MaxEpochEntries*EpochEntrySize:
		return MasterHandshake{}, 0, fmt.Errorf("%w: handshake body of %d bytes", ErrBadFrame, size)
	case h.MaxOffset < -1:
		// Java's master sends -1 for an empty store in some versions.
		return MasterHandshake{}, 0, fmt.Errorf("%w: master offset %d", ErrBadFrame, h.MaxOffset)
	}
	return h, int(size), nil
}

// DecodeEpochEntries decodes a handshake body; the entries must ascend
// in epoch and start offset, start offsets not negative. The last
// entry's end is open (math.MaxInt64), every other ends where the next
// starts.
func DecodeEpochEntries(b []byte) ([]store.EpochEntry, error) {
	if len(b)%EpochEntrySize != 0 || len(b) > MaxEpochEntries*EpochEntrySize {
		return nil, fmt.Errorf("%w: epoch entries of %d bytes", ErrBadFrame, len(b))
	}
	out := make([]store.EpochEntry, 0, len(b)/EpochEntrySize)
	for ; len(b) > 0; b = b[EpochEntrySize:] {
		e := store.EpochEntry{Epoch: int32(binary.BigEndian.Uint32(b)), StartOffset: int64(binary.BigEndian.Uint64(b[4:])), EndOffset: maxEnd}
		if e.StartOffset < 0 {
			return nil, fmt.Errorf("%w: epoch %d starts at %d", ErrBadFrame, e.Epoch, e.StartOffset)
		}
		if n := len(out); n > 0 {
			prev := &out[n-1]
			if e.Epoch <= prev.Epoch || e.StartOffset < prev.StartOffset {
				return nil, fmt.Errorf("%w: epoch entry %d-%d after %d-%d", ErrBadFrame, e.Epoch, e.StartOffset, prev.Epoch, prev.StartOffset)
			}
			prev.EndOffset = e.StartOffset
		}
		out = append(out, e)
	}
	return out, nil
}

// maxEnd is an open epoch's end (Java's Long.MAX_VALUE).
const maxEnd = int64(^uint64(0) >> 1)

// TransferHeader precedes Size bytes of the master's CommitLog from
// Offset, all written by the master of Epoch, which started at
// EpochStart; ConfirmOffset is the master's confirm offset. Size 0: a
// heartbeat.
type TransferHeader struct {
	Size          int32
	Offset        int64
	Epoch         int32
	EpochStart    int64
	ConfirmOffset int64
}

// AppendTo appends the 32-byte encoding of h to dst.
func (h TransferHeader) AppendTo(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(stateTransfer))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.Size))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.Offset))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.Epoch))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.EpochStart))
	return binary.BigEndian.AppendUint64(dst, uint64(h.ConfirmOffset))
}

// DecodeTransferHeader decodes a transfer header from the first
// TransferHeaderSize bytes of b, refusing a state other than TRANSFER,
// negative offsets and sizes above maxSize before anything is allocated
// for them.
func DecodeTransferHeader(b []byte, maxSize int) (TransferHeader, error) {
	if len(b) < TransferHeaderSize {
		return TransferHeader{}, fmt.Errorf("%w: transfer header of %d bytes", ErrBadFrame, len(b))
	}
	st := int32(binary.BigEndian.Uint32(b))
	h := TransferHeader{
		Size:          int32(binary.BigEndian.Uint32(b[4:])),
		Offset:        int64(binary.BigEndian.Uint64(b[8:])),
		Epoch:         int32(binary.BigEndian.Uint32(b[16:])),
		EpochStart:    int64(binary.BigEndian.Uint64(b[20:])),
		ConfirmOffset: int64(binary.BigEndian.Uint64(b[28:])),
	}
	switch {
	case st != stateTransfer:
		return TransferHeader{}, fmt.Errorf("%w: master state %d, want TRANSFER (%d)", ErrBadFrame, st, stateTransfer)
	case h.Size == 0 && h.Offset == -1:
		// Java's master heartbeats at -1 before it knows where to start
		// (an empty store); the slave skips it.
	case h.Size < 0 || int(h.Size) > maxSize || h.Offset < 0 || h.EpochStart < 0 || (h.Size > 0 && h.EpochStart > h.Offset+int64(h.Size)):
		return TransferHeader{}, fmt.Errorf("%w: transfer size %d offset %d epoch %d start %d (max size %d)",
			ErrBadFrame, h.Size, h.Offset, h.Epoch, h.EpochStart, maxSize)
	}
	return h, nil
}
