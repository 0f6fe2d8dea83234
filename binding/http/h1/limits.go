package h1

// Default bounds, in the range of nginx (8 KiB request-line buffer, 16 KiB
// with large_client_header_buffers) and Go's net/http (1 MiB, which is more
// than a gateway in front of JSON-RPC needs).
const (
	DefaultMaxTarget      = 8 << 10
	DefaultMaxHeaderBytes = 16 << 10
	DefaultMaxHeaders     = 100
)

// Limits bound what a parser accepts. A field that is zero or negative
// takes its default, so the zero Limits is [DefaultLimits].
type Limits struct {
	// MaxTarget bounds the request-target in bytes; a longer one is a 414,
	// reported as soon as the target outgrows it, before its line ends.
	MaxTarget int
	// MaxHeaderBytes bounds the whole head, from the first byte (leading
	// empty lines included) to the empty line that ends it; a larger head
	// is a 431, reported as soon as buf holds more than this many bytes
	// without a complete head. For [ChunkedDecoder] it bounds the trailer
	// section.
	MaxHeaderBytes int
	// MaxHeaders bounds the number of header fields (trailer fields for
	// [ChunkedDecoder]); one more is a 431.
	MaxHeaders int
	// AbsoluteWithoutHost lets an HTTP/1.1 request whose target is in
	// absolute-form leave out the Host field, its authority coming from
	// the target: Zilla's server takes such requests, and k3po's http
	// transport sends them. RFC 9112 §3.2 has them answered 400, as they
	// are when this is false.
	AbsoluteWithoutHost bool
}

// DefaultLimits returns 8 KiB for the target, 16 KiB for the head and 100
// header fields.
func DefaultLimits() Limits {
	return Limits{
		MaxTarget:      DefaultMaxTarget,
		MaxHeaderBytes: DefaultMaxHeaderBytes,
		MaxHeaders:     DefaultMaxHeaders,
	}
}

// withDefaults replaces each unset bound by its default.
func (l Limits) withDefaults() Limits {
	if l.MaxTarget <= 0 {
		l.MaxTarget = DefaultMaxTarget
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxHeaders <= 0 {
		l.MaxHeaders = DefaultMaxHeaders
	}
	return l
}
