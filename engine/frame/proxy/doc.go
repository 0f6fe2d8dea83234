// Package proxy holds the proxy frame extensions, generated from
// idl/proxy.idl after Zilla's proxy.idl: the BEGIN of a stream that stands
// for a connection carries a [ProxyBeginEx] with the connection's
// [ProxyAddress] and a list of [ProxyInfo] about the peer (ALPN, authority,
// identity, TLS details, namespace).
//
// An address is one of five kinds, selected by [ProxyAddressFamily]: INET
// (source and destination as text — a host name or an IP literal — with
// ports), INET4 and INET6 (the addresses as 4 or 16 octets, with ports),
// UNIX (socket paths of up to 108 bytes) and NONE. Each but NONE has a
// [ProxyAddressProtocol], STREAM or DATAGRAM. The tcp binding writes INET
// addresses, source being the side that opened the connection, and reads
// any of INET, INET4 and INET6 as a destination.
//
// Building the BEGIN extension of an accepted connection and reading it
// back:
//
//	var b proxy.ProxyBeginExBuilder
//	b.Wrap(buf, 0, len(buf)).TypeID(proxyTypeID).Address().Inet().
//		Protocol(proxy.ProxyAddressProtocolStream).
//		Source("192.0.2.7").Destination("192.0.2.1").
//		SourcePort(49152).DestinationPort(8080)
//	ex, err := b.Build()
//	if a := ex.Address(); a.Kind() == proxy.ProxyAddressKindInet {
//		inet := a.Inet() // inet.SourceString(), inet.DestinationPort(), …
//	}
//
// In scripts the same extension is ${proxy:beginEx()…} and
// ${proxy:matchBeginEx()…}, with the IDL's names:
//
//	proxy:beginEx().typeId(zilla:id("proxy"))
//	    .address().inet().protocol("STREAM").source("127.0.0.1").destination("127.0.0.1")
//	        .sourcePort(0).destinationPort(8080).build().build()
//	    .build()
package proxy
