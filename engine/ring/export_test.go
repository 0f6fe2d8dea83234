package ring

// Bytes exposes the ring's whole buffer, data region then trailer, so the
// tests can pin the bytes the ring writes.
func Bytes(r *Ring) []byte { return r.buf }
