package namesrv

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/rocketd/rocketd/internal/vfs"
)

func TestKVStorePersistsJavaFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "namesrv", "kvConfig.json")
	s, err := OpenKVStore(vfs.Default, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put("ORDER_TOPIC_CONFIG", "T", "broker-a:4"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("ns", "k", "v"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"configTable":{"ORDER_TOPIC_CONFIG":{"T":"broker-a:4"},"ns":{"k":"v"}}}`
	if string(data) != want {
		t.Fatalf("file %s, want %s", data, want)
	}
	// The previous content is kept as .bak; no .tmp is left behind.
	bak, err := os.ReadFile(path + ".bak")
	if err != nil || string(bak) != `{"configTable":{"ORDER_TOPIC_CONFIG":{"T":"broker-a:4"}}}` {
		t.Fatalf(".bak = %s (%v)", bak, err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf(".tmp left behind: %v", err)
	}

	if err := s.Delete("ns", "k"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("ns", "absent"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.List("ns"); ok {
		t.Fatal("empty namespace still listed")
	}
	again, err := OpenKVStore(vfs.Default, path)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := again.Get("ORDER_TOPIC_CONFIG", "T"); !ok || v != "broker-a:4" {
		t.Fatalf("reloaded %q %v", v, ok)
	}
	if _, ok := again.Get("ns", "k"); ok {
		t.Fatal("deleted key came back")
	}
}

func TestKVStoreLoad(t *testing.T) {
	cases := []struct {
		name      string
		file, bak string // "" = absent
		want      map[string]string
		wantErr   string
	}{
		{name: "nothing", want: nil},
		{name: "file", file: `{"configTable":{"ns":{"k":"file"}}}`, want: map[string]string{"k": "file"}},
		// A crash between the rename steps: only .bak is there.
		{name: "bak only", bak: `{"configTable":{"ns":{"k":"bak"}}}`, want: map[string]string{"k": "bak"}},
		{name: "empty file falls back", file: "  \n", bak: `{"configTable":{"ns":{"k":"bak"}}}`, want: map[string]string{"k": "bak"}},
		{name: "corrupt file falls back", file: `{"configTable":{"ns":`, bak: `{"configTable":{"ns":{"k":"bak"}}}`, want: map[string]string{"k": "bak"}},
		{name: "both corrupt", file: `{`, bak: `[`, wantErr: "parse"},
		// Written by Java's fastjson: pretty-printed and with null namespaces.
		{name: "java pretty", file: "{\n\t\"configTable\":{\n\t\t\"ns\":{\n\t\t\t\"k\":\"java\"\n\t\t},\"empty\":null\n\t}\n}", want: map[string]string{"k": "java"}},
		{name: "no table", file: `{}`, want: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kvConfig.json")
			if tc.file != "" {
				os.WriteFile(path, []byte(tc.file), 0o644)
			}
			if tc.bak != "" {
				os.WriteFile(path+".bak", []byte(tc.bak), 0o644)
			}
			s, err := OpenKVStore(vfs.Default, path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := s.List("ns")
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ns = %v, want %v", got, tc.want)
			}
			// The store stays usable whatever it loaded.
			if err := s.Put("empty", "a", "b"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestKVStoreConcurrentPutsAllPersisted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kvConfig.json")
	s, err := OpenKVStore(vfs.Default, path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 5 {
				if err := s.Put("ns", string(rune('a'+i))+string(rune('0'+j)), "v"); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	// The last write to reach the file holds every key: later snapshots are
	// never overwritten by earlier ones.
	again, err := OpenKVStore(vfs.Default, path)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := again.List("ns")
	if len(got) != 20 {
		t.Fatalf("reloaded %d keys, want 20", len(got))
	}
}

func TestKVStoreWriteFailure(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	s, err := OpenKVStore(vfs.Default, filepath.Join(sub, "kvConfig.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The directory of the file turns out to be a regular file: mkdir fails.
	if err := os.WriteFile(sub, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("ns", "k", "v"); err == nil || !strings.Contains(err.Error(), "namesrv: kv config") {
		t.Fatalf("Put on an unwritable path: %v", err)
	}
	// The value is still served from memory.
	if v, ok := s.Get("ns", "k"); !ok || v != "v" {
		t.Fatalf("Get after failed persist: %q %v", v, ok)
	}
}

// TestKVStoreCrashAtEveryWrite crashes the file system at the k-th mutating
// operation of a Put, for every k, and reopens the store on what a crash
// would leave: the value is the old one or the new one, never lost, and
// always the new one once Put has returned nil.
func TestKVStoreCrashAtEveryWrite(t *testing.T) {
	const path = "/home/namesrv/kvConfig.json"
	for k := int64(0); ; k++ {
		mem := vfs.NewMem()
		base, err := OpenKVStore(mem, path)
		if err != nil {
			t.Fatal(err)
		}
		if err := base.Put("ns", "k", "old"); err != nil {
			t.Fatal(err)
		}
		trig := vfs.CrashAt(vfs.OpMutating, k)
		s, err := OpenKVStore(vfs.NewErrorFS(mem, trig), path)
		if err != nil {
			t.Fatal(err)
		}
		putErr := s.Put("ns", "k", "new")
		if !trig.Fired() && putErr != nil {
			t.Fatalf("k=%d: Put failed without an injected fault: %v", k, putErr)
		}

		after, err := OpenKVStore(mem.CrashClone(), path)
		if err != nil {
			t.Fatalf("k=%d: reopen after crash: %v", k, err)
		}
		v, ok := after.Get("ns", "k")
		switch {
		case !ok:
			t.Fatalf("k=%d: value lost by the crash", k)
		case putErr == nil && v != "new":
			t.Fatalf("k=%d: acknowledged Put lost: %q", k, v)
		case v != "old" && v != "new":
			t.Fatalf("k=%d: value %q", k, v)
		}
		if !trig.Fired() {
			if k < 5 {
				t.Fatalf("only %d mutating operations in a Put: the test covers nothing", k)
			}
			return // every crash point of the Put has been visited
		}
	}
}

// TestKVStoreFirstWriteCrash: a crash during the very first write leaves no
// file or the new one, and the store opens either way.
func TestKVStoreFirstWriteCrash(t *testing.T) {
	const path = "/namesrv/kvConfig.json"
	for k := int64(0); ; k++ {
		mem := vfs.NewMem()
		trig := vfs.CrashAt(vfs.OpMutating, k)
		s, err := OpenKVStore(vfs.NewErrorFS(mem, trig), path)
		if err != nil {
			t.Fatal(err)
		}
		putErr := s.Put("ns", "k", "v")
		after, err := OpenKVStore(mem.CrashClone(), path)
		if err != nil {
			t.Fatalf("k=%d: reopen: %v", k, err)
		}
		v, ok := after.Get("ns", "k")
		if putErr == nil && (!ok || v != "v") {
			t.Fatalf("k=%d: acknowledged first Put lost", k)
		}
		if !trig.Fired() {
			return
		}
	}
}
