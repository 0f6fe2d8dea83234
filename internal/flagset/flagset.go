// Package flagset is the one helper behind the state bits that the
// bindings' connections and exchanges keep beside their state: a set of
// flags of one named unsigned type, each flag a bit.
package flagset

// Set holds the flags of type T that are set. Its zero value is empty.
type Set[T ~uint8 | ~uint16 | ~uint32 | ~uint64] struct{ bits T }

// Of returns the set holding v's bits.
func Of[T ~uint8 | ~uint16 | ~uint32 | ~uint64](v T) Set[T] { return Set[T]{bits: v} }

// Has reports whether all of v's bits are set.
func (s Set[T]) Has(v T) bool { return s.bits&v == v }

// Set sets v's bits.
func (s *Set[T]) Set(v T) { s.bits |= v }

// Unset clears v's bits.
func (s *Set[T]) Unset(v T) { s.bits &^= v }
