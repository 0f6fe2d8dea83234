package proxy

// SetCachePage sets the page size of cached lists for the engines started
// after it, and returns a function that restores it.
func SetCachePage(n int) (restore func()) {
	old := cachePage
	cachePage = n
	return func() { cachePage = old }
}
