package meta

import (
	"testing"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/vfs"
)

// TestRequestModesFile: Set writes messageRequestMode.json in Java's form
// (MessageRequestModeManager: topic -> group -> body, fastjson
// PrettyFormat) and a reopen reads it back; a Java-written compact file
// loads too.
func TestRequestModesFile(t *testing.T) {
	fsys := vfs.NewMem()
	opts := Options{Dir: "/c", FS: fsys}
	m, err := OpenRequestModes(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Get("T", "g"); ok {
		t.Fatal("fresh table has a mode")
	}
	if err := m.Set(protocol.SetMessageRequestModeRequestBody{Topic: "T", ConsumerGroup: "g", Mode: protocol.RequestModePop, PopShareQueueNum: 1}); err != nil {
		t.Fatal(err)
	}
	data, err := vfs.ReadFile(fsys, "/c/"+RequestModeFile)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n\t\"messageRequestModeMap\":{\n\t\t\"T\":{\n\t\t\t\"g\":{\n\t\t\t\t\"consumerGroup\":\"g\",\n\t\t\t\t\"mode\":\"POP\",\n\t\t\t\t\"popShareQueueNum\":1,\n\t\t\t\t\"topic\":\"T\"\n\t\t\t}\n\t\t}\n\t}\n}"
	if string(data) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", data, want)
	}
	again, err := OpenRequestModes(opts)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := again.Get("T", "g"); !ok || got.Mode != protocol.RequestModePop || got.PopShareQueueNum != 1 {
		t.Fatalf("reopened: %+v %v", got, ok)
	}

	java := `{"messageRequestModeMap":{"A":{"g2":{"consumerGroup":"g2","mode":"PULL","popShareQueueNum":0,"topic":"A"}}}}`
	if err := writeConfigFile(fsys, "/d/"+RequestModeFile, []byte(java)); err != nil {
		t.Fatal(err)
	}
	j, err := OpenRequestModes(Options{Dir: "/d", FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := j.Get("A", "g2"); !ok || got.Mode != protocol.RequestModePull {
		t.Fatalf("java file: %+v %v", got, ok)
	}
}
