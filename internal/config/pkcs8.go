package config

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/rc4"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"hash"
)

// Encrypted PKCS#8 keys (RFC 5208 EncryptedPrivateKeyInfo) with PBES2
// (RFC 8018): PBKDF2 with HMAC-SHA1/SHA-224/SHA-256/SHA-384/SHA-512 and
// AES-128/192/256-CBC or DES-EDE3-CBC, what `openssl pkcs8 -topk8` writes
// by default; and the PKCS#12 schemes (RFC 7292 appendix C) with SHA-1
// and RC4-128 or 3DES, what `-v1 PBE-SHA1-RC4-128` (RocketMQ's TLS guide)
// and `-v1 PBE-SHA1-3DES` write. Other schemes are refused with the
// command that converts the key. Go's standard library reads none.

var (
	oidPBES2    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidPKCS12   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1}
	oidDES3CBC  = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
	oidAES128   = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192   = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256   = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	hmacsByOID  = map[string]func() hash.Hash{"1.2.840.113549.2.7": sha1.New, "1.2.840.113549.2.8": sha256.New224, "1.2.840.113549.2.9": sha256.New, "1.2.840.113549.2.10": sha512.New384, "1.2.840.113549.2.11": sha512.New}
	errConvert  = errors.New("convert it with: openssl pkcs8 -topk8 -v2 aes-256-cbc -in old.key -out new.key")
	errPassword = errors.New("cannot decrypt the key: wrong keyPassword or a corrupt key")
)

type encryptedPrivateKeyInfo struct {
	Algo pkix.AlgorithmIdentifier
	Data []byte
}

type pbes2Params struct {
	KDF    pkix.AlgorithmIdentifier
	Cipher pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt      []byte
	Iter      int
	KeyLength int                      `asn1:"optional"`
	PRF       pkix.AlgorithmIdentifier `asn1:"optional"`
}

// decryptPKCS8 returns the PKCS#8 DER inside an encrypted one.
func decryptPKCS8(der []byte, password string) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	if rest, err := asn1.Unmarshal(der, &info); err != nil || len(rest) > 0 {
		return nil, fmt.Errorf("malformed encrypted PKCS#8 key: %v", err)
	}
	if len(info.Algo.Algorithm) == len(oidPKCS12)+1 && info.Algo.Algorithm[:len(oidPKCS12)].Equal(oidPKCS12) {
		return decryptPKCS12PBE(info, password)
	}
	if !info.Algo.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("key encryption %v not supported: %w", info.Algo.Algorithm, errConvert)
	}
	var params pbes2Params
	if _, err := asn1.Unmarshal(info.Algo.Parameters.FullBytes, &params); err != nil {
		return nil, fmt.Errorf("malformed PBES2 parameters: %v", err)
	}
	if !params.KDF.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("key derivation %v not supported (PBKDF2 only): %w", params.KDF.Algorithm, errConvert)
	}
	var kdf pbkdf2Params
	if _, err := asn1.Unmarshal(params.KDF.Parameters.FullBytes, &kdf); err != nil {
		return nil, fmt.Errorf("malformed PBKDF2 parameters: %v", err)
	}
	prf := sha1.New
	if len(kdf.PRF.Algorithm) > 0 {
		var ok bool
		if prf, ok = hmacsByOID[kdf.PRF.Algorithm.String()]; !ok {
			return nil, fmt.Errorf("PBKDF2 PRF %v not supported: %w", kdf.PRF.Algorithm, errConvert)
		}
	}
	var keyLen int
	var newBlock func([]byte) (cipher.Block, error)
	switch c := params.Cipher.Algorithm; {
	case c.Equal(oidAES128):
		keyLen, newBlock = 16, aes.NewCipher
	case c.Equal(oidAES192):
		keyLen, newBlock = 24, aes.NewCipher
	case c.Equal(oidAES256):
		keyLen, newBlock = 32, aes.NewCipher
	case c.Equal(oidDES3CBC):
		keyLen, newBlock = 24, des.NewTripleDESCipher
	default:
		return nil, fmt.Errorf("key cipher %v not supported: %w", c, errConvert)
	}
	var iv []byte
	if _, err := asn1.Unmarshal(params.Cipher.Parameters.FullBytes, &iv); err != nil {
		return nil, fmt.Errorf("malformed cipher IV: %v", err)
	}
	if kdf.Iter <= 0 || kdf.Iter > 10_000_000 {
		return nil, fmt.Errorf("PBKDF2 iteration count %d out of range", kdf.Iter)
	}
	key, err := pbkdf2.Key(prf, password, kdf.Salt, kdf.Iter, keyLen)
	if err != nil {
		return nil, err
	}
	block, err := newBlock(key)
	if err != nil {
		return nil, err
	}
	return decryptCBC(block, iv, info.Data)
}

// decryptCBC decrypts CBC data with PKCS#7 padding holding a PKCS#8 key.
func decryptCBC(block cipher.Block, iv, data []byte) ([]byte, error) {
	bs := block.BlockSize()
	if len(iv) != bs || len(data) == 0 || len(data)%bs != 0 {
		return nil, errors.New("malformed encrypted key: bad IV or data length")
	}
	plain := make([]byte, len(data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, data)
	pad := int(plain[len(plain)-1])
	if pad == 0 || pad > bs {
		return nil, errPassword
	}
	for _, b := range plain[len(plain)-pad:] {
		if int(b) != pad {
			return nil, errPassword
		}
	}
	plain = plain[:len(plain)-pad]
	if _, err := x509.ParsePKCS8PrivateKey(plain); err != nil {
		return nil, errPassword
	}
	return plain, nil
}

// The PKCS#12 PBE schemes read (1.2.840.113549.1.12.1.N).
const (
	pbeSHA1RC4128 = 1 // pbeWithSHAAnd128BitRC4
	pbeSHA13DES   = 3 // pbeWithSHAAnd3-KeyTripleDES-CBC
)

type pkcs12PBEParams struct {
	Salt []byte
	Iter int
}

// decryptPKCS12PBE decrypts a key encrypted with a PKCS#12 PBE scheme.
func decryptPKCS12PBE(info encryptedPrivateKeyInfo, password string) ([]byte, error) {
	var params pkcs12PBEParams
	if _, err := asn1.Unmarshal(info.Algo.Parameters.FullBytes, &params); err != nil {
		return nil, fmt.Errorf("malformed PKCS#12 PBE parameters: %v", err)
	}
	if params.Iter <= 0 || params.Iter > 10_000_000 {
		return nil, fmt.Errorf("PKCS#12 PBE iteration count %d out of range", params.Iter)
	}
	pw, err := bmpString(password)
	if err != nil {
		return nil, err
	}
	switch scheme := info.Algo.Algorithm[len(oidPKCS12)]; scheme {
	case pbeSHA1RC4128:
		c, err := rc4.NewCipher(pkcs12KDF(pw, params.Salt, params.Iter, 1, 16))
		if err != nil {
			return nil, err
		}
		plain := make([]byte, len(info.Data))
		c.XORKeyStream(plain, info.Data)
		// No padding to check: the key must parse.
		if _, err := x509.ParsePKCS8PrivateKey(plain); err != nil {
			return nil, errPassword
		}
		return plain, nil
	case pbeSHA13DES:
		block, err := des.NewTripleDESCipher(pkcs12KDF(pw, params.Salt, params.Iter, 1, 24))
		if err != nil {
			return nil, err
		}
		return decryptCBC(block, pkcs12KDF(pw, params.Salt, params.Iter, 2, 8), info.Data)
	default:
		return nil, fmt.Errorf("PKCS#12 key encryption %v not supported (SHA-1 with RC4-128 or 3DES only): %w", info.Algo.Algorithm, errConvert)
	}
}

// bmpString is the password as PKCS#12 hashes it: UTF-16BE and a
// terminating zero.
func bmpString(s string) ([]byte, error) {
	out := make([]byte, 0, 2*len(s)+2)
	for _, r := range s {
		if r > 0xFFFF {
			return nil, errors.New("keyPassword: characters outside the BMP cannot be used with PKCS#12 encryption")
		}
		out = append(out, byte(r>>8), byte(r))
	}
	return append(out, 0, 0), nil
}

// pkcs12KDF derives n bytes of purpose id (1 key, 2 IV) with SHA-1
// (RFC 7292 appendix B.2).
func pkcs12KDF(password, salt []byte, iter int, id byte, n int) []byte {
	const v = 64                    // SHA-1's block size
	fill := func(b []byte) []byte { // b repeated to a multiple of v bytes
		if len(b) == 0 {
			return nil
		}
		out := make([]byte, v*((len(b)+v-1)/v))
		for i := range out {
			out[i] = b[i%len(b)]
		}
		return out
	}
	D := bytes.Repeat([]byte{id}, v)
	I := append(fill(salt), fill(password)...)
	var out []byte
	for len(out) < n {
		h := sha1.New()
		h.Write(D)
		h.Write(I)
		A := h.Sum(nil)
		for range iter - 1 {
			s := sha1.Sum(A)
			A = s[:]
		}
		out = append(out, A...)
		// I_j = (I_j + B + 1) mod 2^(8v), B = A repeated to v bytes.
		B := fill(A)
		for j := 0; j < len(I); j += v {
			carry := 1
			for k := v - 1; k >= 0; k-- {
				sum := int(I[j+k]) + int(B[k]) + carry
				I[j+k], carry = byte(sum), sum>>8
			}
		}
	}
	return out[:n]
}
