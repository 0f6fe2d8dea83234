package spec

import "fmt"

// Pos is a position in a script. Line and Col count from 1; Col counts
// bytes, as Go's own tools do.
type Pos struct {
	File string
	Line int
	Col  int
}

// String formats the position as file:line:col.
func (p Pos) String() string {
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Position returns p. Every node embeds a Pos, so every node has Position.
func (p Pos) Position() Pos { return p }

// Node is any element of a parsed script.
type Node interface {
	Position() Pos
}

// Script is one parsed .rpt file. Properties and Streams are each in source
// order; a script may interleave them, as k3po allows. Warnings lists the
// stray characters Parse dropped, as k3po's lexer drops them; a runner
// should show them, since they are usually typos.
type Script struct {
	File       string
	Properties []*Property
	Streams    []*Stream
	Warnings   ErrorList
}

// Property is a top-level `property name value` statement.
type Property struct {
	Pos
	Name  string
	Value Value
}

// Stream is one `connect` or `accept` block: Head is a *Connect or an
// *Accept, and Commands follow it in order.
//
// For an accept, the commands before the first [Accepted] or [Rejected] act
// on the listening side (barriers, options and events such as opened or
// bound). Each Accepted or Rejected then begins one accepted connection,
// which owns the commands up to the next Accepted or Rejected. k3po writes
// `accepted` as a block of its own that it attaches to the latest accept
// (or to the one named by `accept … as NAME`); the parser attaches it the
// same way, so an accepted block always lands in its accept's Commands.
type Stream struct {
	Pos
	Head     Command
	Commands []Command
}

// Option is an `option name value` line under connect or accept. Name keeps
// its namespace, e.g. "zilla:window".
type Option struct {
	Pos
	Name  string
	Value Value
}

// Command is one statement of a stream. The concrete types are the structs
// below; a type switch tells them apart.
type Command interface {
	Node
	String() string
	command()
}

// Connect opens a client stream: `connect [await BARRIER] URI option…`.
type Connect struct {
	Pos
	Await   string // barrier to wait for before connecting, or ""
	URI     Value  // *Text or *Expression
	Options []*Option
}

// Accept listens: `accept [await BARRIER] URI [as NAME] [notify BARRIER]
// option…`.
type Accept struct {
	Pos
	Await   string
	URI     Value // *Text or *Expression
	As      string
	Notify  string // barrier notified once listening
	Options []*Option
}

// Accepted begins one accepted connection of an accept: `accepted [NAME]`.
type Accepted struct {
	Pos
	Name string // the accept's `as` name, or ""
}

// Rejected begins one rejected connection of an accept:
// `rejected [NAME] [zilla:reset.ext VALUE…]`. Write is nil or the
// *WriteExt / *WriteConfig carried on the rejection (aklivity's k3po 3.4.4
// added that form for RESET extensions).
type Rejected struct {
	Pos
	Name  string
	Write Command
}

// Connected waits for the stream to be established.
type Connected struct{ Pos }

// Opened, Bound, Unbound, Closed, Close, Unbind, Disconnected, ChildOpened
// and ChildClosed are k3po's channel events and commands; Zilla's streams
// rarely use them, but tcp and other transports do.
type (
	Opened       struct{ Pos }
	Bound        struct{ Pos }
	Unbound      struct{ Pos }
	Closed       struct{ Pos }
	Close        struct{ Pos }
	Unbind       struct{ Pos }
	Disconnected struct{ Pos }
	ChildOpened  struct{ Pos }
	ChildClosed  struct{ Pos }
)

// ConnectAbort (`connect abort`) abandons a connect in progress.
type ConnectAbort struct{ Pos }

// ConnectAborted (`connect aborted [zilla:reset.ext MATCHER…]`) expects the
// connect to be refused. Read is nil or the *ReadExt / *ReadConfig that the
// refusal's extension must match (aklivity's k3po 3.4.4 added that form,
// the counterpart of [Rejected.Write]).
type ConnectAborted struct {
	Pos
	Read Command
}

// Read expects data matching Values, in order: `read MATCHER…`.
type Read struct {
	Pos
	Values []Matcher
}

// Write sends the concatenation of Values: `write VALUE…`.
type Write struct {
	Pos
	Values []Value
}

// WriteFlush (`write flush`), WriteClose (`write close`, END), ReadClosed
// (`read closed`), WriteAbort (`write abort`, ABORT), ReadAborted
// (`read aborted`), ReadAbort (`read abort`, RESET) and WriteAborted
// (`write aborted`, RESET received).
type (
	WriteFlush   struct{ Pos }
	WriteClose   struct{ Pos }
	ReadClosed   struct{ Pos }
	WriteAbort   struct{ Pos }
	ReadAborted  struct{ Pos }
	ReadAbort    struct{ Pos }
	WriteAborted struct{ Pos }
)

// ReadExt matches the extension of the next frame of a kind:
// `read zilla:begin.ext MATCHER…`. Kind is "begin", "data", "end", "abort"
// or "reset". Missing is set by a trailing `missing`.
type ReadExt struct {
	Pos
	Kind    string
	Values  []Matcher
	Missing bool
}

// WriteExt sets the extension of the next frame of a kind:
// `write zilla:begin.ext VALUE…`.
type WriteExt struct {
	Pos
	Kind   string
	Values []Value
}

// WriteDataEmpty (`write zilla:data.empty`) sends a DATA frame with an
// empty payload; ReadDataEmpty expects one. ReadDataNull
// (`read zilla:data.null`) expects a DATA frame with no payload at all.
type (
	WriteDataEmpty struct{ Pos }
	ReadDataEmpty  struct{ Pos }
	ReadDataNull   struct{ Pos }
)

// ReadConfig and WriteConfig are `read NS:NAME …` / `write NS:NAME …` for
// namespaces other than zilla, such as k3po's http transport
// (`read http:header "Host" "localhost"`). Name keeps its namespace.
type (
	ReadConfig struct {
		Pos
		Name    string
		Values  []Matcher
		Missing bool
	}
	WriteConfig struct {
		Pos
		Name   string
		Values []Value
	}
)

// ReadOption and WriteOption change how later reads or writes behave:
// `write option zilla:flags "init"`, `read option zilla:ack 12`.
type (
	ReadOption struct {
		Pos
		Name  string
		Value Value
	}
	WriteOption struct {
		Pos
		Name  string
		Value Value
	}
)

// WriteAdvise sends an advisory on the write direction
// (`write advise zilla:flush ${…}`, a FLUSH) and ReadAdvised expects one
// (`read advised zilla:flush ${…}`). ReadAdvise sends an advisory against
// the read direction (`read advise zilla:challenge ${…}`, a CHALLENGE) and
// WriteAdvised expects one. Kind keeps its namespace ("zilla:flush");
// Values may be empty.
type (
	WriteAdvise struct {
		Pos
		Kind   string
		Values []Value
	}
	ReadAdvised struct {
		Pos
		Kind    string
		Values  []Matcher
		Missing bool
	}
	ReadAdvise struct {
		Pos
		Kind   string
		Values []Value
	}
	WriteAdvised struct {
		Pos
		Kind    string
		Values  []Matcher
		Missing bool
	}
)

// Barriers: `read notify X`, `write notify X`, `read await X`,
// `write await X`.
type (
	ReadNotify struct {
		Pos
		Barrier string
	}
	WriteNotify struct {
		Pos
		Barrier string
	}
	ReadAwait struct {
		Pos
		Barrier string
	}
	WriteAwait struct {
		Pos
		Barrier string
	}
)

func (*Connect) command()        {}
func (*Accept) command()         {}
func (*Accepted) command()       {}
func (*Rejected) command()       {}
func (*Connected) command()      {}
func (*Opened) command()         {}
func (*Bound) command()          {}
func (*Unbound) command()        {}
func (*Closed) command()         {}
func (*Close) command()          {}
func (*Unbind) command()         {}
func (*Disconnected) command()   {}
func (*ChildOpened) command()    {}
func (*ChildClosed) command()    {}
func (*ConnectAbort) command()   {}
func (*ConnectAborted) command() {}
func (*Read) command()           {}
func (*Write) command()          {}
func (*WriteFlush) command()     {}
func (*WriteClose) command()     {}
func (*ReadClosed) command()     {}
func (*WriteAbort) command()     {}
func (*ReadAborted) command()    {}
func (*ReadAbort) command()      {}
func (*WriteAborted) command()   {}
func (*ReadExt) command()        {}
func (*WriteExt) command()       {}
func (*WriteDataEmpty) command() {}
func (*ReadDataEmpty) command()  {}
func (*ReadDataNull) command()   {}
func (*ReadConfig) command()     {}
func (*WriteConfig) command()    {}
func (*ReadOption) command()     {}
func (*WriteOption) command()    {}
func (*WriteAdvise) command()    {}
func (*ReadAdvised) command()    {}
func (*ReadAdvise) command()     {}
func (*WriteAdvised) command()   {}
func (*ReadNotify) command()     {}
func (*WriteNotify) command()    {}
func (*ReadAwait) command()      {}
func (*WriteAwait) command()     {}

// Value is something a script writes: a property value, an option value or
// one operand of `write`. The concrete types are *Text, *Bytes, *Number and
// *Expression.
type Value interface {
	Node
	String() string
	value()
}

// Matcher is one operand of `read`: it matches (and may capture) the next
// bytes. *Text, *Bytes, *Number and *Expression match exactly; *Regex,
// *FixedBytes, *VariableBytes and *NumberCapture match a shape.
type Matcher interface {
	Node
	String() string
	matcher()
}

// Text is a quoted literal, "…" or '…', with k3po's escapes (\b \f \r \n
// \t \" \' \\) already decoded. It is written, or matched, as its bytes.
type Text struct {
	Pos
	Text string
}

// Bytes is a hex byte literal such as [0x01 0x02].
type Bytes struct {
	Pos
	Bytes []byte
}

// NumKind is the width of a number literal or capture.
type NumKind uint8

// The widths k3po knows, written big-endian on the wire.
const (
	NumByte  NumKind = iota + 1 // `byte 0x01`, 1 byte
	NumShort                    // `short 1` or `1s`, 2 bytes
	NumInt                      // `int 1` or `1`, 4 bytes
	NumLong                     // `long 1` or `1L`, 8 bytes
)

var numKindNames = [...]string{NumByte: "byte", NumShort: "short", NumInt: "int", NumLong: "long"}

// String returns the k3po keyword of the kind.
func (k NumKind) String() string {
	if int(k) < len(numKindNames) && numKindNames[k] != "" {
		return numKindNames[k]
	}
	return fmt.Sprintf("NumKind(%d)", uint8(k))
}

// Size returns the width in bytes.
func (k NumKind) Size() int {
	switch k {
	case NumByte:
		return 1
	case NumShort:
		return 2
	case NumInt:
		return 4
	case NumLong:
		return 8
	}
	return 0
}

// Number is a fixed-width integer literal. Lit is the digits as written
// (sign, 0x prefix and underscores included, keyword and s/L suffix not);
// Value is decoded the way Java's Long.decode does it, so a leading 0 means
// octal, and it fits the signed range of Kind.
type Number struct {
	Pos
	Kind  NumKind
	Lit   string
	Value int64
}

// Expression is a ${…} operand. Src is the text between ${ and }.
type Expression struct {
	Pos
	X   Expr
	Src string
}

// Regex matches text against a regular expression: /pattern/. Pattern is
// the text between the slashes, in Java's regex syntax as k3po reads it
// (Zilla's scripts use lookaheads such as /(?!101)/, which Go's regexp
// lacks); Parse checks its groups and parentheses but leaves compiling it
// to the runner. Groups names its capturing groups, from (?<name>…), in
// order; when Groups is not empty every capturing group is named, as k3po
// requires, and the runner stores each group's match in that variable.
type Regex struct {
	Pos
	Pattern string
	Groups  []string
}

// FixedBytes matches Length bytes: [0..N], ([0..N]:name) or [(:name){N}].
// Capture is the variable the bytes are stored in, or "".
type FixedBytes struct {
	Pos
	Length  int
	Capture string
}

// VariableBytes matches as many bytes as Length evaluates to:
// [0..${len}] or ([0..${len}]:name).
type VariableBytes struct {
	Pos
	Length  *Expression
	Capture string
}

// NumberCapture reads a big-endian integer of Kind into a variable:
// (byte:x), (short:x), (int:x), (long:x).
type NumberCapture struct {
	Pos
	Kind    NumKind
	Capture string
}

func (*Text) value()       {}
func (*Bytes) value()      {}
func (*Number) value()     {}
func (*Expression) value() {}

func (*Text) matcher()          {}
func (*Bytes) matcher()         {}
func (*Number) matcher()        {}
func (*Expression) matcher()    {}
func (*Regex) matcher()         {}
func (*FixedBytes) matcher()    {}
func (*VariableBytes) matcher() {}
func (*NumberCapture) matcher() {}
