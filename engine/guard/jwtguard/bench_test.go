package jwtguard

import (
	"testing"

	"github.com/sluicehq/sluice/engine/guard"
)

// BenchmarkReauthorize measures a request whose token the worker has
// verified before, and one whose token it has not (each iteration clears
// the cache, so the signature is checked every time).
func BenchmarkReauthorize(b *testing.B) {
	for _, name := range []string{"rsa", "ec", "ed"} {
		s := signerOf(b, name)
		token := s.sign(b, testClaims(nil))
		b.Run(name+"/cached", func(b *testing.B) {
			g, _ := newTestGuard(b, testOptions(b, nil))
			h := attach(g)
			b.ReportAllocs()
			for b.Loop() {
				id := h.Reauthorize(1, 2, 0, token)
				if !guard.Authorized(id) {
					b.Fatal("refused")
				}
				h.Deauthorize(id)
			}
		})
		b.Run(name+"/uncached", func(b *testing.B) {
			g, _ := newTestGuard(b, testOptions(b, nil))
			h := attach(g)
			b.ReportAllocs()
			for b.Loop() {
				clear(h.cache)
				id := h.Reauthorize(1, 2, 0, token)
				if !guard.Authorized(id) {
					b.Fatal("refused")
				}
				h.Deauthorize(id)
			}
		})
	}
}
