package message

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// maxDecompressedBody bounds what DecompressBody inflates: a body is at
// most maxMessageSize (4 MiB by default) compressed, and a reader must not
// be made to allocate without limit by a hostile record.
const maxDecompressedBody = 64 << 20

// DecompressBody returns a stored body in clear: body itself when sysFlag
// says it is not compressed, else the body inflated with the compression
// the sysFlag names (zlib when it names none: clients before 5.x; LZ4
// frames and zstd from 5.x clients). The broker never needs this (it
// stores and serves bodies as sent); tools that print bodies do.
func DecompressBody(sysFlag int32, body []byte) ([]byte, error) {
	if !IsCompressed(sysFlag) {
		return body, nil
	}
	var r io.Reader
	switch t := CompressionType(sysFlag); t {
	case CompressionZlibDefault, CompressionZlib:
		zr, err := zlib.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("message: zlib body: %w", err)
		}
		defer zr.Close()
		r = zr
	case CompressionLZ4:
		r = lz4.NewReader(bytes.NewReader(body))
	case CompressionZSTD:
		zr, err := zstd.NewReader(bytes.NewReader(body), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxDecompressedBody))
		if err != nil {
			return nil, fmt.Errorf("message: zstd body: %w", err)
		}
		defer zr.Close()
		r = zr
	default:
		return nil, fmt.Errorf("message: unknown compression type %#x in sysFlag %#x", t, sysFlag)
	}
	out, err := io.ReadAll(io.LimitReader(r, maxDecompressedBody+1))
	if err != nil {
		return nil, fmt.Errorf("message: decompress body (sysFlag %#x): %w", sysFlag, err)
	}
	if len(out) > maxDecompressedBody {
		return nil, fmt.Errorf("message: body inflates beyond %d bytes", maxDecompressedBody)
	}
	return out, nil
}
