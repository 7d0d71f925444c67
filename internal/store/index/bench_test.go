package index

import (
	"strconv"
	"testing"

	"github.com/rocketd/rocketd/internal/vfs"
)

// BenchmarkStageCommit is the index's whole share of dispatch for one
// record with a UNIQ_KEY and one KEYS entry (two items), on the real disk
// with Java's default dimensions, committed per=500 records at a time as a
// 1 MiB dispatch chunk of ~2 KiB records would be, or per=4 as a closed
// loop of producers dispatches them. Compare with the store's per-message
// put cost (BenchmarkPutIndex in package store):
//
//	go test -run '^$' -bench . ./internal/store/index/
func BenchmarkStageCommit(b *testing.B) {
	for _, per := range []int{4, 500} {
		b.Run("per="+strconv.Itoa(per), func(b *testing.B) { benchStageCommit(b, per) })
	}
}

func benchStageCommit(b *testing.B, per int) {
	x, err := Open(Options{FS: vfs.Default, Dir: b.TempDir(), HashSlotNum: 5_000_000, IndexNum: 20_000_000, LastExitOK: true})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	propsOf := make([]string, 4096)
	for i := range propsOf {
		propsOf[i] = "UNIQ_KEY\x01C0A80107000078E6A2C0" + strconv.Itoa(i) + "\x02KEYS\x01order-" + strconv.Itoa(i) + "\x02"
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x.Stage("BenchTopic", propsOf[i%len(propsOf)], 0, int64(i)*2048, 1_700_000_000_000+int64(i))
		if i%per == per-1 {
			if err := x.Commit(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := x.Commit(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkQuery looks one key up among 1,000,000 (two items per record)
// in the file being written: the index's part of QUERY_MESSAGE (equal
// 32-bit hashes among a million keys occur: those answer two offsets).
func BenchmarkQuery(b *testing.B) {
	x, err := Open(Options{FS: vfs.Default, Dir: b.TempDir(), HashSlotNum: 5_000_000, IndexNum: 20_000_000, LastExitOK: true})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	const n = 1_000_000
	for i := 0; i < n; i++ {
		x.Stage("BenchTopic", "KEYS\x01order-"+strconv.Itoa(i)+"\x02", 0, int64(i)*2048, 1_700_000_000_000+int64(i))
		if i%1000 == 999 {
			if err := x.Commit(); err != nil {
				b.Fatal(err)
			}
		}
	}
	keys := make([]string, 4096)
	for i := range keys {
		keys[i] = "order-" + strconv.Itoa(i*241%n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := x.Query("BenchTopic", keys[i%len(keys)], 32, 0, 1<<62)
		if err != nil || len(r.Offsets) == 0 { // more: a hash collision
			b.Fatalf("%d found: %v", len(r.Offsets), err)
		}
	}
}
