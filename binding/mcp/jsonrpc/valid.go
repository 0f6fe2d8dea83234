package jsonrpc

// Track resets t and runs it over b, a whole message: the value must end
// within b, and only whitespace may follow it. It returns nil or the
// [*SyntaxError] that [Tracker.Err] then returns too; on success t reports
// the value's kind and its members' ranges as after the last Feed. A
// message held whole in a buffer is read this way in one pass.
func (t *Tracker) Track(b []byte) error {
	t.Reset()
	n, done, err := t.Feed(b)
	if err != nil {
		return err
	}
	if !done {
		return t.Finish()
	}
	if i := SkipSpace(b, n); i < len(b) {
		return t.fail(int64(i), codeEnd, b[i])
	}
	return nil
}

// Valid reports whether b is exactly one JSON value, with only whitespace
// around it, as a [Tracker] with options o accepts it. It allocates only
// when b is not valid. A caller that also wants the value's members uses
// [Tracker.Track].
func Valid(b []byte, o Options) bool {
	var t Tracker
	t.configure(o)
	return t.Track(b) == nil
}
