package timer

// entry is one pending timer message: its delivery time and where the held
// record is: in the CommitLog (fileOff < 0), or copied into its bucket file
// at fileOff (the bucket is the one of deliverMs). phyOffset (the CommitLog
// offset of the held record) identifies the message either way. 32 bytes
// in memory; 20 on disk, plus the record when copied.
type entry struct {
	deliverMs int64
	phyOffset int64
	fileOff   int64
	size      int32
}

// minHeap orders entries by delivery time (then CommitLog offset, so the
// delivery order of equal times is the send order). A hand-written heap: no
// interface boxing per push/pop.
type minHeap []entry

func (h minHeap) less(i, j int) bool {
	if h[i].deliverMs != h[j].deliverMs {
		return h[i].deliverMs < h[j].deliverMs
	}
	return h[i].phyOffset < h[j].phyOffset
}

func (h *minHeap) push(e entry) {
	*h = append(*h, e)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *minHeap) pop() entry {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s.less(r, l) {
			m = r
		}
		if !s.less(m, i) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	if cap(s) > 1024 && len(s) < cap(s)/4 {
		*h = append(minHeap(nil), s...) // give memory back after a burst
	}
	return top
}
