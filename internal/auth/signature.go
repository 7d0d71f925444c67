package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"slices"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// The ext fields of a signed request (Java's SessionCredentials).
const (
	FieldAccessKey     = "AccessKey"
	FieldSignature     = "Signature"
	FieldSecurityToken = "SecurityToken"
)

// uniqueKeyQuery is MixAll.UNIQUE_MSG_QUERY_FLAG: Java leaves it out of
// the signed content of requests from clients up to V4_9_3, which did not
// sign it.
const uniqueKeyQuery = "_UNIQUE_KEY_QUERY"

// versionV4_9_3 is MQVersion.Version.V4_9_3.ordinal().
const versionV4_9_3 = protocol.VersionV4_9_4 - 1

// sigLen is the length of a signature: base64 of an HMAC-SHA1.
var sigLen = base64.StdEncoding.EncodedLen(sha1.Size)

// stackFields is how many ext fields the content walk sorts without a heap
// allocation; real requests carry 2..20.
const stackFields = 32

// writeContent feeds the signed content of req to h: the values of its ext
// fields except Signature, in the order of their keys, then the body
// (AclUtils.combineRequestContent over the TreeMap Java builds). A key
// that repeats in a received header counts once, with its last value, as
// in Java's map.
//
// fields are req's ext fields (Command.AppendExt), read once by the
// caller. The values go to the hash through acc, a buffer the caller
// keeps: one Write for a usual header instead of one per field.
func writeContent(h hash.Hash, acc []byte, req *remoting.Command, fields []remoting.ExtEntry) {
	var ordBuf [stackFields]uint64
	ord, index := contentOrder(ordBuf[:0], fields, req.Version <= versionV4_9_3)
	n := 0
	for i, o := range ord {
		f := &fields[o&index]
		// A later entry of the same key wins. Equal keys have equal
		// prefixes (all equal, zero, in the general order).
		if i+1 < len(ord) && ord[i+1]&^index == o&^index && fields[ord[i+1]&index].Key == f.Key {
			continue
		}
		if n+len(f.Value) > len(acc) {
			h.Write(acc[:n])
			n = 0
			if len(f.Value) > len(acc) {
				h.Write(stringBytes(f.Value))
				continue
			}
		}
		n += copy(acc[n:], f.Value)
	}
	h.Write(acc[:n])
	if req.Body != nil {
		h.Write(req.Body)
	} else {
		for _, p := range req.BodyParts {
			h.Write(p)
		}
	}
}

// orderIndex masks the index of a field in an element of contentOrder's
// packed order.
const orderIndex = 0xff

// asciiBits are the high bits of the first 7 bytes of a prefix: a prefix
// without them begins with 7 ASCII bytes.
const asciiBits = 0x8080808080808000

// contentOrder appends to dst the order of fields' entries in the signed
// content, leaving out Signature (and _UNIQUE_KEY_QUERY when skipUnique):
// sorted by key as javaCompare orders them, entries of the same key in
// their received order. index masks an entry's index in an element; the
// other bits are equal for entries of the same key.
//
// Keys are nearly always ASCII, and they nearly always differ in their
// first 7 bytes. When every key begins with 7 ASCII bytes (or is shorter
// and ASCII), an element is those bytes, big-endian, then the index:
// sorting the integers sorts the keys by their prefix (a shorter key
// padded with zeros sorts first, as in Java), the received order kept
// between equal prefixes, and only runs of keys sharing a prefix go to
// javaCompare. Otherwise every pair goes to javaCompare.
func contentOrder(dst []uint64, fields []remoting.ExtEntry, skipUnique bool) (ord []uint64, index uint64) {
	ascii := len(fields) <= orderIndex+1
	for i := range fields {
		k := fields[i].Key
		if k == FieldSignature || skipUnique && k == uniqueKeyQuery {
			continue
		}
		p := keyPrefix(k)
		if p&asciiBits != 0 {
			ascii = false
		}
		dst = append(dst, p&^orderIndex|uint64(i))
	}
	if !ascii {
		dst = dst[:0]
		for i := range fields {
			if k := fields[i].Key; k != FieldSignature && !(skipUnique && k == uniqueKeyQuery) {
				dst = append(dst, uint64(i))
			}
		}
		slices.SortStableFunc(dst, func(a, b uint64) int { return javaCompare(fields[a].Key, fields[b].Key) })
		return dst, ^uint64(0)
	}
	// Insertion sort: headers are short (2..20 fields), and the integers
	// are unique, so the order is the received one between equal prefixes.
	for i := 1; i < len(dst); i++ {
		v := dst[i]
		j := i
		for ; j > 0 && dst[j-1] > v; j-- {
			dst[j] = dst[j-1]
		}
		dst[j] = v
	}
	for i := 0; i+1 < len(dst); {
		j := i + 1
		for j < len(dst) && dst[j]>>8 == dst[i]>>8 {
			j++
		}
		if j-i > 1 {
			slices.SortStableFunc(dst[i:j], func(a, b uint64) int {
				return javaCompare(fields[a&orderIndex].Key, fields[b&orderIndex].Key)
			})
		}
		i = j
	}
	return dst, orderIndex
}

// keyPrefix is the first 8 bytes of k as a big-endian integer, zeros
// after a shorter key: integer order is byte order of the prefixes.
func keyPrefix(k string) uint64 {
	if len(k) >= 8 {
		return binary.BigEndian.Uint64(stringBytes(k))
	}
	var p uint64
	for i := 0; i < len(k); i++ {
		p |= uint64(k[i]) << (56 - 8*i)
	}
	return p
}

// stringBytes views s as bytes for a hash that only reads them: no copy
// on the per-request path.
func stringBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// javaCompare orders keys as Java's String.compareTo (TreeMap): by UTF-16
// code units. That is byte order of UTF-8 except between a supplementary
// character (a surrogate pair, 0xD800..) and one of U+E000..U+FFFF. An
// invalid byte counts as U+FFFD, as Java decodes it; keys equal that way
// are ordered by their bytes, so the order is total and a signature never
// depends on the order a map yields its keys.
func javaCompare(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i < len(a) && i < len(b) && a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
		return int(a[i]) - int(b[i]) // the usual case: ASCII keys
	}
	// Restart after the last ASCII byte of the common prefix: a rune
	// boundary in both (no multi-byte sequence holds an ASCII byte).
	p := i
	for p > 0 && a[p-1] >= utf8.RuneSelf {
		p--
	}
	ua, ub := utf16Iter{s: a[p:]}, utf16Iter{s: b[p:]}
	for {
		ra, oka := ua.next()
		rb, okb := ub.next()
		switch {
		case !oka && !okb:
			return strings.Compare(a[p:], b[p:])
		case !oka:
			return -1
		case !okb:
			return 1
		case ra != rb:
			return int(ra) - int(rb)
		}
	}
}

// utf16Iter yields the UTF-16 code units of a UTF-8 string.
type utf16Iter struct {
	s   string
	i   int
	low rune // the second unit of a surrogate pair, pending
}

func (it *utf16Iter) next() (rune, bool) {
	if it.low != 0 {
		r := it.low
		it.low = 0
		return r, true
	}
	if it.i >= len(it.s) {
		return 0, false
	}
	r, w := utf8.DecodeRuneInString(it.s[it.i:])
	it.i += w
	if r >= 0x10000 {
		hi, lo := utf16.EncodeRune(r)
		it.low = lo
		return hi, true
	}
	return r, true
}

// macPool keeps HMAC states keyed with one secret: computing a signature
// then allocates nothing.
type macPool struct {
	secret []byte
	pool   sync.Pool // *macState
}

type macState struct {
	h   hash.Hash
	sum [sha1.Size]byte
	b64 [28]byte // base64 of sum
	acc [contentChunk]byte
}

// contentChunk is the size of the buffer writeContent gathers values in.
const contentChunk = 512

func newMacPool(secret string) *macPool {
	p := &macPool{secret: []byte(secret)}
	p.pool.New = func() any { return &macState{h: hmac.New(sha1.New, p.secret)} }
	return p
}

// sign computes req's signature into st.b64 (AclSigner.calSignature:
// HmacSHA1, base64); fields are req's ext fields.
func (p *macPool) sign(st *macState, req *remoting.Command, fields []remoting.ExtEntry) []byte {
	st.h.Reset()
	writeContent(st.h, st.acc[:], req, fields)
	st.h.Sum(st.sum[:0])
	base64.StdEncoding.Encode(st.b64[:], st.sum[:])
	return st.b64[:]
}

// verify reports whether sig is req's signature with p's secret, in time
// independent of where they differ; fields are req's ext fields.
func (p *macPool) verify(req *remoting.Command, fields []remoting.ExtEntry, sig string) bool {
	st := p.pool.Get().(*macState)
	want := p.sign(st, req, fields)
	ok := len(sig) == sigLen && subtle.ConstantTimeCompare(want, stringBytes(sig)) == 1
	p.pool.Put(st)
	return ok
}

// Credentials sign requests as Java's AclClientRPCHook and the Go
// client's primitive.Credentials do (SessionCredentials).
type Credentials struct {
	AccessKey     string `json:"accessKey"`
	SecretKey     string `json:"secretKey"`
	SecurityToken string `json:"securityToken,omitempty"`
}

// Sign adds AccessKey (and SecurityToken when set) to req's ext fields,
// then Signature over the content (AclClientRPCHook.doBeforeRequest). A
// typed header becomes the map first.
func (c Credentials) Sign(req *remoting.Command) {
	req.SetExtField(FieldAccessKey, c.AccessKey)
	if c.SecurityToken != "" {
		req.SetExtField(FieldSecurityToken, c.SecurityToken)
	}
	delete(req.ExtFields, FieldSignature)
	h := hmac.New(sha1.New, []byte(c.SecretKey))
	writeContent(h, make([]byte, contentChunk), req, req.AppendExt(nil))
	req.SetExtField(FieldSignature, base64.StdEncoding.EncodeToString(h.Sum(nil)))
}
