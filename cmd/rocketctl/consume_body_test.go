package main

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// TestConsumePrintsBodiesInClear sends bodies the way the official clients
// do (compressed with zlib, LZ4 or zstd above 4 KiB; binary) and checks
// that consume prints them inflated, and binary ones as base64 in --json.
func TestConsumePrintsBodiesInClear(t *testing.T) {
	ns := startRocketd(t)
	const topic = "BodyTopic"
	mustRun(t, "-n", ns, "topic", "create", "-t", topic, "-r", "1", "-w", "1")
	c := &ctl{namesrv: ns, timeout: 5 * time.Second, client: remoting.NewClient(remoting.ClientConfig{})}
	defer c.client.Close()
	var qs []queue
	waitFor(t, 10*time.Second, "the topic route", func() (bool, string) {
		var err error
		qs, err = c.writeQueues(topic)
		return err == nil && len(qs) == 1, ""
	})
	text := strings.Repeat("a body worth compressing; ", 300)
	compress := map[string]func(w io.Writer) io.WriteCloser{
		"zlib": func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) },
		"lz4":  func(w io.Writer) io.WriteCloser { return lz4.NewWriter(w) },
		"zstd": func(w io.Writer) io.WriteCloser { z, _ := zstd.NewWriter(w); return z },
	}
	flags := map[string]int32{"zlib": message.CompressionZlib, "lz4": message.CompressionLZ4, "zstd": message.CompressionZSTD}
	send := func(sysFlag int32, body []byte, tag string) {
		t.Helper()
		h := protocol.SendMessageRequestHeader{ProducerGroup: "g", Topic: topic, DefaultTopic: defaultTopic,
			DefaultTopicQueueNums: 4, QueueID: 0, SysFlag: sysFlag, BornTimestamp: time.Now().UnixMilli(),
			Properties:     message.EncodeProperties(map[string]string{message.PropertyTags: tag}),
			ReconsumeTimes: protocol.Some[int32](0), UnitMode: protocol.Some(false), Batch: protocol.Some(false), BrokerName: qs[0].broker}
		ext := map[string]string{}
		h.AppendExtV2(ext)
		resp, err := c.invoke(qs[0].addr, protocol.SendMessageV2, ext, body)
		if err != nil || resp.Code != protocol.Success {
			t.Fatalf("send %s: %v %v", tag, err, resp)
		}
	}
	for _, name := range []string{"zlib", "lz4", "zstd"} {
		var b bytes.Buffer
		w := compress[name](&b)
		w.Write([]byte(text))
		w.Close()
		send(message.SysFlagCompressed|flags[name], b.Bytes(), name)
	}
	binary := []byte{0xff, 0x00, 0xfe, 'x'}
	send(0, binary, "binary")

	got := parseJSONLines[consumed](t, mustRun(t, "-n", ns, "--json", "consume", "-t", topic))
	if len(got) != 4 {
		t.Fatalf("consumed %d messages, want 4", len(got))
	}
	for _, m := range got[:3] {
		if m.Body != text || m.Compressed != m.Tags || m.BodyBase64 != "" {
			t.Errorf("%s: compressed=%q body of %d bytes (want the %d in clear)", m.Tags, m.Compressed, len(m.Body), len(text))
		}
	}
	if m := got[3]; m.Body != "" || m.BodyBase64 != base64.StdEncoding.EncodeToString(binary) || m.Compressed != "" {
		t.Errorf("binary body: %+v", m)
	}
	out := mustRun(t, "-n", ns, "consume", "-t", topic, "-c", "1")
	if !strings.Contains(out, "compressed=zlib") || !strings.Contains(out, "body: a body worth compressing;") {
		t.Errorf("text output:\n%s", out)
	}
}

// TestGroupProgressUnknownGroup: a group with no offsets anywhere is an
// error, not an empty table.
func TestGroupProgressUnknownGroup(t *testing.T) {
	ns := startRocketd(t)
	out, err := rocketctl(t, "-n", ns, "group", "progress", "-g", "nosuch")
	if err == nil || !strings.Contains(err.Error(), "no consume offsets") {
		t.Fatalf("group progress -g nosuch: err %v\n%s", err, out)
	}
}
