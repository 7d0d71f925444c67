package grpc

import "testing"

func TestParseReceiptHandle(t *testing.T) {
	h, ok := parseReceiptHandle("5 1700000000000 30000 3 1 broker-a 0 7 123456")
	if !ok || h.mark != "1" || h.queueID != 0 || h.offset != 7 || h.commitLogOffset != 123456 {
		t.Fatalf("parsed %+v ok=%v", h, ok)
	}
	if h, ok := parseReceiptHandle("5 1700000000000 30000 3 0 broker-a 2 9"); !ok || h.commitLogOffset != -1 || h.queueID != 2 {
		t.Fatalf("eight fields: %+v ok=%v", h, ok)
	}
	for _, bad := range []string{"", "not a handle", "5 x 30000 3 0 b 0 7", "5 1 2 3 0 b q 7", "5 1 2 3 0 b 0 7 z"} {
		if _, ok := parseReceiptHandle(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}
