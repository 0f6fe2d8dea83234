package proxy

import "strings"

// SetCachePage sets the page size of cached lists for the engines started
// after it, and returns a function that restores it.
func SetCachePage(n int) (restore func()) {
	old := cachePage
	cachePage = n
	return func() { cachePage = old }
}

// Respelled returns a base64url text with the lowest bit of its last
// character set: a bit the encoding leaves unused when the text's length
// is not a multiple of four, so that a lenient decoder reads the same
// bytes from both spellings.
func Respelled(text string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	if len(text)%4 == 0 {
		panic("Respelled: no unused bits in " + text)
	}
	last := strings.IndexByte(alphabet, text[len(text)-1])
	return text[:len(text)-1] + alphabet[last|1:last|1+1]
}

// SetSyncIndexTools sets the most tools a worker indexes on its own
// thread, and returns a function that restores it.
func SetSyncIndexTools(n int) (restore func()) {
	old := syncIndexTools
	syncIndexTools = n
	return func() { syncIndexTools = old }
}
