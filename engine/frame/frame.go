package frame

import "strconv"

// FrameType is a frame's type id: the message type of its ring record.
type FrameType uint32

// The frame types, from idl/core.idl.
const (
	FrameBegin     FrameType = BeginTypeID
	FrameData      FrameType = DataTypeID
	FrameEnd       FrameType = EndTypeID
	FrameAbort     FrameType = AbortTypeID
	FrameFlush     FrameType = FlushTypeID
	FrameReset     FrameType = ResetTypeID
	FrameWindow    FrameType = WindowTypeID
	FrameSignal    FrameType = SignalTypeID
	FrameChallenge FrameType = ChallengeTypeID
	FrameRedirect  FrameType = RedirectTypeID
)

// throttleBit marks the frames that travel against the data direction of
// their stream: ZILLA.md §1, "Bit 0x40000000 marks a throttle frame".
const throttleBit = 0x40000000

// frameNames is indexed by the low byte of the type id, separately for
// stream and throttle frames.
var frameNames = [2][6]string{
	{1: "BEGIN", 2: "DATA", 3: "END", 4: "ABORT", 5: "FLUSH"},
	{1: "RESET", 2: "WINDOW", 3: "SIGNAL", 4: "CHALLENGE", 5: "REDIRECT"},
}

// IsThrottle reports whether t travels against its stream's data direction
// (RESET, WINDOW, SIGNAL, CHALLENGE, REDIRECT).
func (t FrameType) IsThrottle() bool { return t&throttleBit != 0 }

// Valid reports whether t is one of the frame types above.
func (t FrameType) Valid() bool {
	low := t &^ throttleBit
	return low >= 1 && low <= 5
}

// String returns the frame's name, or UNKNOWN_FRAME_<id>.
func (t FrameType) String() string {
	if t.Valid() {
		row := 0
		if t.IsThrottle() {
			row = 1
		}
		return frameNames[row][t&^throttleBit]
	}
	return "UNKNOWN_FRAME_" + strconv.FormatUint(uint64(t), 10)
}

// Flags are the DATA frame flags.
type Flags uint8

// The DATA flags.
const (
	FlagDataFin        Flags = 0x01 // the last fragment of a message
	FlagDataInit       Flags = 0x02 // the first fragment of a message
	FlagDataIncomplete Flags = 0x04 // the message was cut short
	FlagDataSkip       Flags = 0x08 // the payload is to be skipped

	// FlagsDataMessage marks a whole message: INIT and FIN, the default.
	FlagsDataMessage = FlagDataInit | FlagDataFin
)

// Has reports whether all of v's bits are set in f.
func (f Flags) Has(v Flags) bool { return f&v == v }

// Layout of the common header, pinned by the tests against idl/core.idl.
const (
	// HeaderSize is the size of the common header shared by every frame.
	HeaderSize = FrameSize
	// ExtensionPrefixSize is the size of the compositeId and typeId that
	// start every frame extension.
	ExtensionPrefixSize = ExtensionSize
	// DataPayloadOffset is where a DATA frame's payload starts: the header,
	// flags, budgetId, reserved and the int32 length (ZILLA.md §1). A
	// producer that reads bytes straight into a claimed frame puts them
	// here, then writes the header for the count it got with
	// DataBuilder.PayloadReserve, which leaves the payload bytes alone.
	DataPayloadOffset = HeaderSize + 1 + 8 + 4 + 4
)
