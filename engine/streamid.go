package engine

// Stream ids follow Zilla's layout (ZILLA.md §1, "Stream id layout"):
//
//	bit 0      1 = initial direction, 0 = reply; replyID = initialID &^ 1
//	bits 62–56 the worker that allocated the id (the client index)
//	bits 54–48 the worker the initial stream is delivered to (the server index)
//	bits 30–0  a per-worker counter stepping by 2
//
// Id 0 is reserved for system messages.
const (
	clientShift = 56
	serverShift = 48
	indexMask   = 0x7f
	counterMask = 0x7fffffff

	// MaxWorkers is the most workers the 7-bit worker fields can address.
	MaxWorkers = indexMask + 1
)

// IsInitial reports whether id names the initial direction of a stream.
func IsInitial(id int64) bool { return id&1 == 1 }

// ReplyID returns the reply id of an initial stream id.
func ReplyID(initialID int64) int64 { return initialID &^ 1 }

// ClientIndex returns the worker that allocated id.
func ClientIndex(id int64) int { return int(id>>clientShift) & indexMask }

// ServerIndex returns the worker an initial stream is delivered to.
func ServerIndex(id int64) int { return int(id>>serverShift) & indexMask }

// streamID composes an initial stream id.
func streamID(client, server int, counter int64) int64 {
	return int64(client)<<clientShift | int64(server)<<serverShift | counter&counterMask | 1
}

// targetIndex returns the worker whose ring receives a frame on id: stream
// frames on an initial id and throttle frames on a reply id go to the
// server index; the other two go back to the client index.
func targetIndex(id int64, throttle bool) int {
	if IsInitial(id) != throttle {
		return ServerIndex(id)
	}
	return ClientIndex(id)
}

// BindingID composes a binding id from the namespace and binding label ids.
func BindingID(namespace, binding int32) int64 {
	return int64(namespace)<<32 | int64(uint32(binding))
}

// NamespaceID returns the namespace label id of a binding id.
func NamespaceID(bindingID int64) int32 { return int32(bindingID >> 32) }

// LocalID returns the binding label id of a binding id.
func LocalID(bindingID int64) int32 { return int32(bindingID) }
