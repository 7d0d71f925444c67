package message

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/testutil/script"
)

// TestRecordSpec runs testdata/record.txt: each case is a directive, its
// input, "----" and the expected output. The file is the record layout of
// spec §5.1 written as examples, one field per line; review changes to it as
// diffs (go test -run TestRecordSpec -rewrite regenerates it).
//
//	encode              input: field=value lines; output: the encoded record, field by field
//	decode [crc=false]  input: hex (spaces, newlines and # comments ignored); output: the outcome
func TestRecordSpec(t *testing.T) {
	script.Run(t, "testdata/record.txt", func(t *testing.T, c script.Case) string {
		return runRecordDirective(t, c.Directive, c.Input)
	})
}

func runRecordDirective(t *testing.T, directive, input string) string {
	fields := strings.Fields(directive)
	switch fields[0] {
	case "encode":
		r := recordFromSpec(t, input)
		return describeRecord(AppendRecord(nil, &r))
	case "decode":
		crc := !strings.Contains(directive, "crc=false")
		var hexText strings.Builder
		for _, line := range strings.Split(input, "\n") {
			line, _, _ = strings.Cut(line, "#")
			hexText.WriteString(strings.Join(strings.Fields(line), ""))
		}
		b, err := hex.DecodeString(hexText.String())
		if err != nil {
			t.Fatalf("bad hex in %q: %v", directive, err)
		}
		r, n, err := DecodeRecord(b, crc)
		if err != nil {
			return fmt.Sprintf("error: %v\nconsumed: %d", err, n)
		}
		return fmt.Sprintf("consumed: %d\ntopic: %q\nbody: %q\nproperties: %q\nqueue %d offset %d, physical %d, sysflag %#x\nborn %v at %d, stored %v at %d",
			n, r.Topic, r.Body, r.Properties, r.QueueID, r.QueueOffset, r.PhysicalOffset, r.SysFlag,
			r.BornHost, r.BornTimestamp, r.StoreHost, r.StoreTimestamp)
	}
	t.Fatalf("unknown directive %q", directive)
	return ""
}

func recordFromSpec(t *testing.T, input string) Record {
	var r Record
	num := func(v string) int64 {
		n, err := strconv.ParseInt(v, 0, 64)
		if err != nil {
			t.Fatalf("bad number %q", v)
		}
		return n
	}
	for _, line := range strings.Split(input, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			t.Fatalf("bad field line %q", line)
		}
		switch k {
		case "queueId":
			r.QueueID = int32(num(v))
		case "flag":
			r.Flag = int32(num(v))
		case "queueOffset":
			r.QueueOffset = num(v)
		case "physicalOffset":
			r.PhysicalOffset = num(v)
		case "sysFlag":
			r.SysFlag = int32(num(v))
		case "bornTimestamp":
			r.BornTimestamp = num(v)
		case "bornHost":
			r.BornHost = netip.MustParseAddrPort(v)
		case "storeTimestamp":
			r.StoreTimestamp = num(v)
		case "storeHost":
			r.StoreHost = netip.MustParseAddrPort(v)
		case "reconsumeTimes":
			r.ReconsumeTimes = int32(num(v))
		case "preparedOffset":
			r.PreparedTransactionOffset = num(v)
		case "body":
			r.Body = []byte(unquote(t, v))
		case "topic":
			r.Topic = unquote(t, v)
		case "properties":
			r.Properties = unquote(t, v)
		default:
			t.Fatalf("unknown field %q", k)
		}
	}
	return r
}

func unquote(t *testing.T, v string) string {
	if strings.HasPrefix(v, "repeat(") { // repeat(c,n)
		c, n, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(v, "repeat("), ")"), ",")
		k, _ := strconv.Atoi(n)
		return strings.Repeat(c, k)
	}
	s, err := strconv.Unquote(v)
	if err != nil {
		t.Fatalf("bad string %s: %v", v, err)
	}
	return s
}

// describeRecord walks an encoded record by the spec's table, independently
// of the decoder, and prints one field per line: offset, name, bytes.
func describeRecord(b []byte) string {
	var sb strings.Builder
	pos := 0
	field := func(name string, n int, note string) []byte {
		v := b[pos : pos+n]
		shown := hex.EncodeToString(v)
		if len(shown) > 40 {
			shown = shown[:40] + "..."
		}
		fmt.Fprintf(&sb, "%04d %-22s %s", pos, name, shown)
		if note != "" {
			fmt.Fprintf(&sb, "  (%s)", note)
		}
		sb.WriteByte('\n')
		pos += n
		return v
	}
	be := binary.BigEndian
	total := be.Uint32(b)
	field("TOTALSIZE", 4, strconv.Itoa(int(total)))
	field("MAGICCODE", 4, "")
	field("BODYCRC", 4, "")
	field("QUEUEID", 4, "")
	field("FLAG", 4, "")
	field("QUEUEOFFSET", 8, "")
	field("PHYSICALOFFSET", 8, "")
	sys := int32(be.Uint32(b[pos:]))
	field("SYSFLAG", 4, "")
	field("BORNTIMESTAMP", 8, "")
	host := func(name string, v6 bool) {
		if v6 {
			field(name+" address", 16, "IPv6")
		} else {
			field(name+" address", 4, "IPv4")
		}
		field(name+" port", 4, "")
	}
	host("BORNHOST", sys&SysFlagBornHostV6 != 0)
	field("STORETIMESTAMP", 8, "")
	host("STOREHOST", sys&SysFlagStoreHostV6 != 0)
	field("RECONSUMETIMES", 4, "")
	field("PREPARED_TX_OFFSET", 8, "")
	bodyLen := int(be.Uint32(b[pos:]))
	field("BODYLENGTH", 4, strconv.Itoa(bodyLen))
	field("BODY", bodyLen, "")
	var topicLen int
	if be.Uint32(b[4:]) == MagicV2 {
		topicLen = int(be.Uint16(b[pos:]))
		field("TOPICLENGTH", 2, "v2: int16")
	} else {
		topicLen = int(b[pos])
		field("TOPICLENGTH", 1, "v1: byte")
	}
	field("TOPIC", topicLen, "")
	propsLen := int(be.Uint16(b[pos:]))
	field("PROPERTIESLENGTH", 2, strconv.Itoa(propsLen))
	field("PROPERTIES", propsLen, "")
	fmt.Fprintf(&sb, "%04d end", pos)
	if !bytes.Equal(b[:pos], b) {
		sb.WriteString(" (trailing bytes!)")
	}
	return sb.String()
}
