package message

import "hash/crc32"

// BodyCRC is RocketMQ's body checksum: CRC-32/IEEE masked to 31 bits
// (UtilAll.crc32 returns crc & 0x7FFFFFFF), over the stored (possibly
// compressed) body.
func BodyCRC(body []byte) uint32 { return crc32.ChecksumIEEE(body) & 0x7FFFFFFF }
