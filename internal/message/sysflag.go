package message

// MessageSysFlag bits (spec §5.6). The values are RocketMQ's and are stored
// in every record: do not change them.
const (
	SysFlagCompressed int32 = 0x1 // body compressed (zlib unless the compression bits say otherwise)
	SysFlagMultiTags  int32 = 0x2 // set by the broker for MULTI_TAG topic filters

	// Transaction type, bits 2-3 (read with TransactionType).
	TransactionNotType      int32 = 0x0
	TransactionPreparedType int32 = 0x4 // half message: stored, never dispatched to a consume queue
	TransactionCommitType   int32 = 0x8
	TransactionRollbackType int32 = 0xC
	transactionMask         int32 = 0xC

	SysFlagBornHostV6  int32 = 0x10 // born host field is 16 + 4 bytes
	SysFlagStoreHostV6 int32 = 0x20 // store host field is 16 + 4 bytes
	SysFlagNeedUnwrap  int32 = 0x40 // 5.x inner batch
	SysFlagInnerBatch  int32 = 0x80 // 5.x inner batch

	// Compression type, bits 8-10, meaningful with SysFlagCompressed.
	CompressionZlibDefault int32 = 0x000 // old clients set no type: zlib
	CompressionLZ4         int32 = 0x100
	CompressionZSTD        int32 = 0x200
	CompressionZlib        int32 = 0x300
	compressionMask        int32 = 0x700
)

// TransactionType returns the transaction bits of sysFlag: one of
// TransactionNotType, TransactionPreparedType, TransactionCommitType,
// TransactionRollbackType.
func TransactionType(sysFlag int32) int32 { return sysFlag & transactionMask }

// WithTransactionType returns sysFlag with its transaction bits replaced by t.
func WithTransactionType(sysFlag, t int32) int32 {
	return sysFlag&^transactionMask | t&transactionMask
}

// Dispatched reports whether a record with this sysFlag gets a consume-queue
// unit and a queue offset: plain and committed messages do, prepared and
// rolled-back transaction records stay in the commit log only.
func Dispatched(sysFlag int32) bool {
	t := TransactionType(sysFlag)
	return t == TransactionNotType || t == TransactionCommitType
}

// IsCompressed reports whether the body is compressed.
func IsCompressed(sysFlag int32) bool { return sysFlag&SysFlagCompressed != 0 }

// CompressionType returns the compression bits (CompressionLZ4, ...); 0 means
// zlib from a client that predates the bits.
func CompressionType(sysFlag int32) int32 { return sysFlag & compressionMask }
