package tcp

import (
	"testing"

	"github.com/sluicehq/sluice/engine/frame/proxy"
)

// FuzzDestination feeds arbitrary BEGIN extensions to the client's
// destination parser: it must never panic, and whatever it accepts must
// name a usable destination.
func FuzzDestination(f *testing.F) {
	const typeID = 7
	buf := make([]byte, 512)
	var b proxy.ProxyBeginExBuilder
	b.Wrap(buf, 0, len(buf)).TypeID(typeID).Address().Inet().Protocol(proxy.ProxyAddressProtocolStream).
		Source("").Destination("example.com").SourcePort(0).DestinationPort(443)
	n, _ := b.BuildLimit()
	f.Add(append([]byte(nil), buf[:n]...))
	b.Wrap(buf, 0, len(buf)).TypeID(typeID).Address().Inet6().Protocol(proxy.ProxyAddressProtocolStream).
		Source(make([]byte, 16)).Destination(make([]byte, 16)).SourcePort(1).DestinationPort(2)
	n, _ = b.BuildLimit()
	f.Add(append([]byte(nil), buf[:n]...))
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, typeID, 0, 0, 0, 9})
	h := &Handler{proxyTypeID: typeID}
	f.Fuzz(func(t *testing.T, ext []byte) {
		host, addr, _, ok := h.destination(ext)
		if ok && addr.IsValid() && host != "" {
			t.Fatalf("both a host %q and an address %s", host, addr)
		}
	})
}

// FuzzPorts parses arbitrary port strings: an error or ports in range,
// never a panic.
func FuzzPorts(f *testing.F) {
	for _, s := range []string{"8080", "8080-8081", " 1 - 2 ", "9-1", "-", "99999999999999999999", "0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ports, err := parsePorts(s)
		if err != nil {
			return
		}
		if len(ports) == 0 || len(ports) > maxPorts {
			t.Fatalf("%q: %d ports", s, len(ports))
		}
		for _, p := range ports {
			if p == 0 {
				t.Fatalf("%q: port 0", s)
			}
		}
	})
}
