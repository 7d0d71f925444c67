package message

import (
	"bytes"
	"compress/zlib"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

func compressFor(t testing.TB, typ int32, body []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	switch typ {
	case CompressionZlibDefault, CompressionZlib:
		w := zlib.NewWriter(&b)
		w.Write(body)
		w.Close()
	case CompressionLZ4:
		w := lz4.NewWriter(&b)
		w.Write(body)
		w.Close()
	case CompressionZSTD:
		w, err := zstd.NewWriter(&b)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body)
		w.Close()
	}
	return b.Bytes()
}

func TestDecompressBody(t *testing.T) {
	body := []byte(strings.Repeat("rocketd compresses like the clients do; ", 200))
	if got, err := DecompressBody(0, body); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("uncompressed body changed: %v", err)
	}
	for _, typ := range []int32{CompressionZlibDefault, CompressionZlib, CompressionLZ4, CompressionZSTD} {
		flag := SysFlagCompressed | typ
		got, err := DecompressBody(flag, compressFor(t, typ, body))
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("type %#x: %d bytes, %v", typ, len(got), err)
		}
		if _, err := DecompressBody(flag, body); err == nil {
			t.Errorf("type %#x: clear text decompressed without an error", typ)
		}
	}
	if _, err := DecompressBody(SysFlagCompressed|0x400, body); err == nil || !strings.Contains(err.Error(), "unknown compression") {
		t.Errorf("unknown type: %v", err)
	}
}

func TestDecompressBodyIsBounded(t *testing.T) {
	bomb := compressFor(t, CompressionZlib, make([]byte, maxDecompressedBody+1))
	if _, err := DecompressBody(SysFlagCompressed|CompressionZlib, bomb); err == nil || !strings.Contains(err.Error(), "beyond") {
		t.Fatalf("a body inflating past the bound: %v", err)
	}
}

func FuzzDecompressBody(f *testing.F) {
	body := []byte("hello, hello, hello, hello")
	for _, typ := range []int32{CompressionZlib, CompressionLZ4, CompressionZSTD} {
		f.Add(SysFlagCompressed|typ, compressFor(f, typ, body))
	}
	f.Add(SysFlagCompressed, []byte{0x78, 0x9c, 0xff})
	f.Fuzz(func(t *testing.T, sysFlag int32, data []byte) {
		out, err := DecompressBody(sysFlag, data)
		if err == nil && len(out) > maxDecompressedBody {
			t.Fatalf("%d bytes beyond the bound", len(out))
		}
	})
}
