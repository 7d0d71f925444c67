package protocol

import (
	"fmt"
	"testing"
)

// BenchmarkUnmarshalTopicConfigTable decodes a 1000-topic table, as the
// name server does with every uncompressed REGISTER_BROKER body and a
// broker with topics.json at start.
func BenchmarkUnmarshalTopicConfigTable(b *testing.B) {
	w := TopicConfigSerializeWrapper{TopicConfigTable: map[string]TopicConfig{}, DataVersion: DataVersion{Counter: 1, Timestamp: 1}}
	for i := range 1000 {
		name := fmt.Sprintf("Topic%04d", i)
		w.TopicConfigTable[name] = NewTopicConfig(name)
	}
	data, err := MarshalFastJSON(&w)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var got TopicConfigSerializeWrapper
		if err := UnmarshalFastJSON(data, &got); err != nil {
			b.Fatal(err)
		}
	}
}
