package protocol

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// RegisterBrokerBody is the REGISTER_BROKER request body (§4.4).
type RegisterBrokerBody struct {
	TopicConfigSerializeWrapper TopicConfigSerializeWrapper `json:"topicConfigSerializeWrapper"`
	FilterServerList            []string                    `json:"filterServerList"`
}

// ErrRegisterBody marks a malformed compressed REGISTER_BROKER body.
var ErrRegisterBody = errors.New("protocol: malformed compressed register-broker body")

// maxRegisterBodyInflated bounds the inflated size of a compressed body so a
// small hostile body cannot make the name server allocate without limit. A
// topic line is about 40 bytes: this leaves room for millions of topics.
const maxRegisterBodyInflated = 256 << 20

// DecodeRegisterBrokerBody reads a REGISTER_BROKER body: the zlib form when
// compressed (header "compressed"), otherwise fastjson text; requests from
// brokers older than V3_0_11 carry a bare TopicConfigSerializeWrapper,
// recognised by its topicConfigTable property.
func DecodeRegisterBrokerBody(body []byte, compressed bool, version int32) (*RegisterBrokerBody, error) {
	if compressed {
		return decodeCompressedRegisterBody(body, version)
	}
	var b RegisterBrokerBody
	if err := UnmarshalFastJSON(body, &b); err != nil {
		return nil, fmt.Errorf("protocol: register-broker body: %w", err)
	}
	if version < VersionV3_0_11 && b.TopicConfigSerializeWrapper.TopicConfigTable == nil {
		// An old broker (or one that left version unset) sent the bare
		// wrapper. Java goes by the version alone; looking at the content
		// too accepts both shapes from a version-0 sender.
		if err := UnmarshalFastJSON(body, &b.TopicConfigSerializeWrapper); err != nil {
			return nil, fmt.Errorf("protocol: register-broker body: %w", err)
		}
	}
	return &b, nil
}

// MarshalFastJSON returns the uncompressed JSON form.
func (b *RegisterBrokerBody) MarshalFastJSON() []byte {
	out, err := MarshalFastJSON(b)
	if err != nil {
		panic("protocol: encoding RegisterBrokerBody: " + err.Error())
	}
	return out
}

// EncodeCompressed returns the zlib form of §4.4 (best compression, zlib
// header), as a broker with compressedRegister=true sends it. Topic system
// flags and order flags are not carried by this form.
func (b *RegisterBrokerBody) EncodeCompressed() ([]byte, error) {
	var raw bytes.Buffer
	dv, err := MarshalFastJSON(b.TopicConfigSerializeWrapper.DataVersion)
	if err != nil {
		return nil, err
	}
	writeChunk(&raw, dv)
	table := b.TopicConfigSerializeWrapper.TopicConfigTable
	writeInt32(&raw, int32(len(table)))
	for _, name := range sortedKeys(table) {
		tc := table[name]
		writeChunk(&raw, []byte(tc.EncodeLine()))
	}
	fs, err := MarshalFastJSON(b.FilterServerList)
	if err != nil {
		return nil, err
	}
	writeChunk(&raw, fs)
	// 5.x: the static topics' mapping info, a count then one JSON each.
	infos := b.TopicConfigSerializeWrapper.TopicQueueMappingInfoMap
	writeInt32(&raw, int32(len(infos)))
	for _, topic := range sortedKeys(infos) {
		js, err := MarshalFastJSON(infos[topic])
		if err != nil {
			return nil, err
		}
		writeChunk(&raw, js)
	}

	var out bytes.Buffer
	zw, err := zlib.NewWriterLevel(&out, zlib.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func writeInt32(w *bytes.Buffer, n int32) {
	w.Write(binary.BigEndian.AppendUint32(nil, uint32(n)))
}

func writeChunk(w *bytes.Buffer, p []byte) {
	writeInt32(w, int32(len(p)))
	w.Write(p)
}

func decodeCompressedRegisterBody(body []byte, version int32) (*RegisterBrokerBody, error) {
	zr, err := zlib.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRegisterBody, err)
	}
	defer zr.Close()
	r := chunkReader{r: io.LimitReader(zr, maxRegisterBodyInflated)}

	var b RegisterBrokerBody
	dv := r.chunk("data version")
	if r.err == nil {
		if err := UnmarshalFastJSON(dv, &b.TopicConfigSerializeWrapper.DataVersion); err != nil {
			return nil, fmt.Errorf("%w: data version: %w", ErrRegisterBody, err)
		}
	}
	count := r.int32("topic count")
	if r.err == nil && count < 0 {
		return nil, fmt.Errorf("%w: negative topic count %d", ErrRegisterBody, count)
	}
	// The count is not trusted for allocation: the map grows with the
	// topics actually present.
	b.TopicConfigSerializeWrapper.TopicConfigTable = make(map[string]TopicConfig, min(int(count), 1024))
	for i := int32(0); i < count && r.err == nil; i++ {
		line := r.chunk("topic config")
		if r.err != nil {
			break
		}
		var tc TopicConfig
		if err := tc.DecodeLine(string(line)); err != nil {
			return nil, fmt.Errorf("%w: topic %d: %w", ErrRegisterBody, i, err)
		}
		b.TopicConfigSerializeWrapper.TopicConfigTable[tc.TopicName] = tc
	}
	fs := r.chunk("filter server list")
	if r.err != nil {
		return nil, r.err
	}
	if err := UnmarshalFastJSON(fs, &b.FilterServerList); err != nil {
		return nil, fmt.Errorf("%w: filter server list: %w", ErrRegisterBody, err)
	}
	if version < VersionV5_0_0 {
		return &b, nil
	}
	// A 5.x broker goes on with the static topics' mapping info (Java
	// requires it; a body that ends here is taken as having none).
	var first [1]byte
	if n, _ := io.ReadFull(r.r, first[:]); n == 0 {
		return &b, nil
	}
	r.r = io.MultiReader(bytes.NewReader(first[:]), r.r)
	count = r.int32("mapping count")
	if r.err == nil && count < 0 {
		return nil, fmt.Errorf("%w: negative mapping count %d", ErrRegisterBody, count)
	}
	for i := int32(0); i < count && r.err == nil; i++ {
		js := r.chunk("topic queue mapping info")
		if r.err != nil {
			break
		}
		var info TopicQueueMappingInfo
		if err := UnmarshalFastJSON(js, &info); err != nil {
			return nil, fmt.Errorf("%w: topic queue mapping info %d: %w", ErrRegisterBody, i, err)
		}
		if b.TopicConfigSerializeWrapper.TopicQueueMappingInfoMap == nil {
			b.TopicConfigSerializeWrapper.TopicQueueMappingInfoMap = map[string]*TopicQueueMappingInfo{}
		}
		b.TopicConfigSerializeWrapper.TopicQueueMappingInfoMap[info.Topic] = &info
	}
	if r.err != nil {
		return nil, r.err
	}
	return &b, nil
}

// chunkReader reads the int32-length-prefixed parts of the compressed body
// with a sticky error.
type chunkReader struct {
	r   io.Reader
	err error
	buf bytes.Buffer
}

func (c *chunkReader) int32(what string) int32 {
	if c.err != nil {
		return 0
	}
	var b [4]byte
	if _, err := io.ReadFull(c.r, b[:]); err != nil {
		c.err = fmt.Errorf("%w: %s: %w", ErrRegisterBody, what, err)
		return 0
	}
	return int32(binary.BigEndian.Uint32(b[:]))
}

// chunk returns the next length-prefixed part. The buffer grows with the data
// actually inflated, never by the claimed length alone.
func (c *chunkReader) chunk(what string) []byte {
	n := c.int32(what + " length")
	if c.err != nil {
		return nil
	}
	if n < 0 {
		c.err = fmt.Errorf("%w: %s: negative length %d", ErrRegisterBody, what, n)
		return nil
	}
	c.buf.Reset()
	got, err := io.CopyN(&c.buf, c.r, int64(n))
	if err != nil {
		c.err = fmt.Errorf("%w: %s: %d of %d bytes: %w", ErrRegisterBody, what, got, n, err)
		return nil
	}
	return bytes.Clone(c.buf.Bytes())
}

// BodyCRC32 is the bodyCrc32 header value for a REGISTER_BROKER body: CRC32
// (IEEE) of the bytes as sent, masked to a non-negative int32.
func BodyCRC32(body []byte) int32 { return int32(crc32.ChecksumIEEE(body) & 0x7FFFFFFF) }
