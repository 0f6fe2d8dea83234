// Package flyweight is the runtime support of the Go flyweights that codegen
// generates from IDL files: errors, byte orders, varints and the generic
// array views and builders.
//
// A generated reader is a view over a byte slice. Wrap validates every
// length against the limit once, so a truncated or hostile buffer is an
// error and never a panic; getters then read straight from the buffer with
// no copy and no allocation. A generated builder writes fields in IDL order
// into a caller's buffer, fills in defaults and length fields, and reports
// running out of room as an error value.
//
//	var b frame.DataBuilder
//	b.Wrap(buf, 0, len(buf)).OriginID(1).RoutedID(2).StreamID(3).
//		Sequence(0).Acknowledge(0).Maximum(8192).BudgetID(0).Reserved(5).
//		Payload([]byte("hello"))
//	data, err := b.Build()
//
// Bytes returned by getters alias the wrapped buffer: they are valid until
// that buffer is reused (for a ring record, until the record is released).
package flyweight
