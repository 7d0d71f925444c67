package txn

import "testing"

func TestOpState(t *testing.T) {
	var o opState
	o.reset(10)
	o.trimDone(100) // half progress 100: the bitset starts at 64
	o.addOp([]int64{130})
	o.addOp(nil)
	o.addOp([]int64{101, 200})
	o.addOp([]int64{50})      // below the half progress: not kept
	o.addOp([]int64{1 << 40}) // absurd: ignored
	if o.next() != 15 || o.doneBase != 64 {
		t.Fatalf("next %d doneBase %d", o.next(), o.doneBase)
	}
	for h, want := range map[int64]bool{130: true, 101: true, 200: true, 50: false, 100: false, 131: false, 1 << 40: false} {
		if o.isDone(h) != want {
			t.Errorf("isDone(%d) = %v", h, !want)
		}
	}
	// Half progress 150: ops 10 (130) and 11 (none) are passed; op 12
	// names 200 and holds the op progress.
	if got := o.advance(150); got != 12 {
		t.Fatalf("op progress %d, want 12", got)
	}
	o.trimDone(150) // whole words only: bits below the progress are never asked for
	if o.doneBase != 128 || !o.isDone(200) || o.isDone(101) {
		t.Fatalf("after trim: doneBase %d, 200 %v, 101 %v", o.doneBase, o.isDone(200), o.isDone(101))
	}
	if got := o.advance(201); got != 15 {
		t.Fatalf("op progress %d, want 15", got)
	}
	o.trimDone(10_000)
	if len(o.done) != 0 || o.isDone(200) {
		t.Fatal("bitset not emptied")
	}
}
