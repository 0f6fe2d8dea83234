package ring

// Record layout: Agrona's RecordDescriptor. The tests pin these values.
const (
	// HeaderLength is the size of a record header: the int32 length at byte
	// 0, then the int32 message type at byte 4, both little-endian. The
	// length counts the header too, as Agrona's does (recordLength = length
	// + HEADER_LENGTH), so a record with an n-byte payload has length
	// HeaderLength+n.
	HeaderLength = 8

	// Alignment is the alignment of every record in the data region. A
	// record with length l takes align(l, Alignment) bytes.
	Alignment = 8

	// PaddingType is the message type of a padding record. Padding fills the
	// space left at the end of the data region when a record does not fit
	// there, and replaces an aborted claim. [Ring.Read] skips it.
	PaddingType int32 = -1
)

// Trailer layout: Agrona's RingBufferDescriptor. The trailer follows the data
// region, so the trailer field at offset o lives at byte capacity+o of the
// buffer. Each int64 sits alone in two 64-byte cache lines (Agrona's
// CACHE_LINE_LENGTH*2), which keeps the producers' tail apart from the
// consumer's head even with adjacent-line prefetching. The first 128 bytes
// are padding, shielding the tail from the end of the data region.
const (
	// TailOffset holds the producers' position: the total number of bytes
	// ever claimed. Producers advance it with compare-and-swap.
	TailOffset = 128
	// HeadCacheOffset holds a recent copy of the head, shared by producers so
	// that they seldom touch the consumer's cache line.
	HeadCacheOffset = 256
	// HeadOffset holds the consumer's position: the total number of bytes
	// ever consumed. Only the consumer writes it.
	HeadOffset = 384
	// CorrelationOffset holds a counter producers may draw unique ids from
	// ([Ring.NextCorrelationID]).
	CorrelationOffset = 512
	// HeartbeatOffset holds the consumer's last heartbeat time, for
	// liveness checks from outside ([Ring.SetConsumerHeartbeat]).
	HeartbeatOffset = 640
	// TrailerLength is the size of the trailer in bytes.
	TrailerLength = 768
)

// Capacity limits for the data region.
const (
	// MinCapacity is the smallest data capacity: an empty ring then always
	// has room for a record of [Ring.MaxMessage] bytes.
	MinCapacity = 64
	// MaxCapacity is the largest data capacity. It keeps every record length
	// and every offset of the file (capacity+trailer) inside an int32, as
	// Agrona's int-indexed buffers require.
	MaxCapacity = 1 << 30
)

// align rounds n up to a multiple of Alignment.
func align(n int) int { return (n + Alignment - 1) &^ (Alignment - 1) }

// header packs a record header into the little-endian int64 that holds it:
// the length in the low half (the first four bytes) and the type in the high
// half. Storing the header as one 64-bit word makes length and type visible
// together.
func header(length, msgType int32) int64 {
	return int64(uint64(uint32(length)) | uint64(uint32(msgType))<<32)
}

// checkCapacity reports whether capacity can be a ring's data capacity.
func checkCapacity(capacity int) bool {
	return capacity >= MinCapacity && capacity <= MaxCapacity && capacity&(capacity-1) == 0
}
