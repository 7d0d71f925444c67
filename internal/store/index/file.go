package index

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/rocketd/rocketd/internal/vfs"
)

// slotsPerChunk is how many slots one dirty mark covers (4 KiB of slots):
// the unit in which the in-memory slot table is written back.
const slotsPerChunk = 1024

// file is one index file. Sealed files (and files loaded but not written
// to) are read from disk; the file being written keeps its slot table and
// its unwritten items in memory (doc.go, "Writing and durability").
// Index.mu guards every field but f, path, slotNum and indexNum.
type file struct {
	f        vfs.File
	path     string
	name     string
	slotNum  int32
	indexNum int32
	hdr      Header

	// Write state, nil/zero until the file is written to.
	slots   []int32  // the whole slot table
	dirty   []uint64 // bitmap of slot chunks changed since written
	pending []byte   // items [written, hdr.IndexCount), not yet on disk
	written int32    // items below this index number are on disk

	sealed    bool // full: no more items
	persisted bool // sealed and entirely on disk (slots, items, header, synced)
}

func (fl *file) itemsBase() int64 { return HeaderSize + int64(fl.slotNum)*SlotSize }

func (fl *file) full() bool { return fl.hdr.IndexCount >= fl.indexNum }

// loadSlots reads the slot table into memory so that the file can be
// written to.
func (fl *file) loadSlots() error {
	buf := make([]byte, int(fl.slotNum)*SlotSize)
	if _, err := fl.f.ReadAt(buf, HeaderSize); err != nil {
		return fmt.Errorf("index: read slots of %s: %w", fl.path, err)
	}
	slots := make([]int32, fl.slotNum)
	for i := range slots {
		slots[i] = int32(binary.BigEndian.Uint32(buf[i*SlotSize:]))
	}
	fl.slots = slots
	fl.dirty = make([]uint64, (int(fl.slotNum)+slotsPerChunk*64-1)/(slotsPerChunk*64))
	fl.written = fl.hdr.IndexCount
	return nil
}

// slot returns slot s, from memory or from disk.
func (fl *file) slot(s int32) (int32, error) {
	if fl.slots != nil {
		return fl.slots[s], nil
	}
	var b [SlotSize]byte
	if _, err := fl.f.ReadAt(b[:], HeaderSize+int64(s)*SlotSize); err != nil {
		return 0, fmt.Errorf("index: read slot %d of %s: %w", s, fl.path, err)
	}
	return int32(binary.BigEndian.Uint32(b[:])), nil
}

// item returns item n, from the unwritten items or from disk.
func (fl *file) item(n int32, scratch *[ItemSize]byte) (Item, error) {
	if fl.slots != nil && n >= fl.written {
		at := int(n-fl.written) * ItemSize
		return ParseItem(fl.pending[at:])
	}
	if _, err := fl.f.ReadAt(scratch[:], fl.itemsBase()+int64(n)*ItemSize); err != nil {
		return Item{}, fmt.Errorf("index: read item %d of %s: %w", n, fl.path, err)
	}
	return ParseItem(scratch[:])
}

// put adds one item in memory (Java's IndexFile.putKey); the caller has
// checked the file is not full and has its slots loaded.
func (fl *file) put(hash int32, phyOffset, storeTimestamp int64) {
	s := hash % fl.slotNum
	prev := fl.slots[s]
	if prev <= 0 || prev > fl.hdr.IndexCount {
		prev = 0
	}
	var diff int64
	if fl.hdr.BeginTimestamp > 0 {
		diff = (storeTimestamp - fl.hdr.BeginTimestamp) / 1000
		diff = min(max(diff, 0), math.MaxInt32)
	}
	n := fl.hdr.IndexCount
	fl.pending = Item{KeyHash: hash, PhyOffset: phyOffset, TimeDiff: int32(diff), PrevIndex: prev}.AppendTo(fl.pending)
	fl.slots[s] = n
	fl.dirty[s/(slotsPerChunk*64)] |= 1 << (uint(s/slotsPerChunk) % 64)
	if n <= 1 {
		fl.hdr.BeginPhyOffset = phyOffset
		fl.hdr.BeginTimestamp = storeTimestamp
	}
	if prev == 0 {
		fl.hdr.HashSlotCount++
	}
	fl.hdr.IndexCount++
	fl.hdr.EndPhyOffset = phyOffset
	fl.hdr.EndTimestamp = storeTimestamp
	if fl.full() {
		fl.sealed = true
	}
}

// timeMatched is Java's isTimeMatched.
func (fl *file) timeMatched(begin, end int64) bool {
	h := fl.hdr
	return (begin < h.BeginTimestamp && end > h.EndTimestamp) ||
		(begin >= h.BeginTimestamp && begin <= h.EndTimestamp) ||
		(end >= h.BeginTimestamp && end <= h.EndTimestamp)
}

// selectOffsets appends to out the offsets of items of key hash in
// [begin, end], newest first, until out holds maxNum (Java's
// selectPhyOffset).
func (fl *file) selectOffsets(out []int64, hash int32, maxNum int, begin, end int64) ([]int64, error) {
	count := fl.hdr.IndexCount
	next, err := fl.slot(hash % fl.slotNum)
	if err != nil {
		return out, err
	}
	if next <= 0 || next > count || count <= 1 {
		return out, nil
	}
	var scratch [ItemSize]byte
	// A chain is at most count long: a cycle in a damaged file ends there.
	for steps := int32(0); len(out) < maxNum && steps < count; steps++ {
		it, err := fl.item(next, &scratch)
		if err != nil {
			return out, err
		}
		if it.TimeDiff < 0 {
			break
		}
		t := fl.hdr.BeginTimestamp + int64(it.TimeDiff)*1000
		if it.KeyHash == hash && t >= begin && t <= end {
			out = append(out, it.PhyOffset)
		}
		if it.PrevIndex <= 0 || it.PrevIndex > count || it.PrevIndex == next || t < begin {
			break
		}
		next = it.PrevIndex
	}
	return out, nil
}

// writeItems writes pending, the items from index number from on (the
// caller holds no lock; only the writer changes pending).
func (fl *file) writeItems(pending []byte, from int32) error {
	if len(pending) == 0 {
		return nil
	}
	if _, err := fl.f.WriteAt(pending, fl.itemsBase()+int64(from)*ItemSize); err != nil {
		return fmt.Errorf("index: write items of %s: %w", fl.path, err)
	}
	return nil
}

// writeSlots writes the dirty slot chunks and then the header h. The
// caller holds no lock; slots are only changed by the writer that calls it.
func (fl *file) writeSlots(slots []int32, dirty []uint64, h Header) error {
	buf := make([]byte, 0, slotsPerChunk*SlotSize)
	for w, bits := range dirty {
		for bits != 0 {
			b := 0
			for bits&(1<<b) == 0 {
				b++
			}
			bits &^= 1 << b
			chunk := w*64 + b
			lo := chunk * slotsPerChunk
			hi := min(lo+slotsPerChunk, len(slots))
			buf = buf[:0]
			for _, v := range slots[lo:hi] {
				buf = binary.BigEndian.AppendUint32(buf, uint32(v))
			}
			if _, err := fl.f.WriteAt(buf, HeaderSize+int64(lo)*SlotSize); err != nil {
				return fmt.Errorf("index: write slots of %s: %w", fl.path, err)
			}
		}
	}
	if _, err := fl.f.WriteAt(h.AppendTo(make([]byte, 0, HeaderSize)), 0); err != nil {
		return fmt.Errorf("index: write header of %s: %w", fl.path, err)
	}
	return nil
}
