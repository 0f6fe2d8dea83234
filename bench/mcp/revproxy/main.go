// Command revproxy is the MCP-unaware baseline of the MCP benchmark: Go's
// net/http/httputil.ReverseProxy in front of the upstream. It forwards
// every request as is (sessions included) and, with FlushInterval -1,
// flushes after every write, so SSE responses stream through.
//
//	revproxy -addr 127.0.0.1:7202 -upstream http://127.0.0.1:7200
package main

import (
	"flag"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7202", "listen address")
	upstream := flag.String("upstream", "http://127.0.0.1:7200", "upstream base URL (paths are kept)")
	conns := flag.Int("conns", 256, "idle keep-alive connections kept to the upstream")
	flag.Parse()
	target, err := url.Parse(*upstream)
	if err != nil {
		log.Fatalf("revproxy: -upstream: %v", err)
	}
	// The default Transport keeps 2 idle connections per host, which under
	// 64 concurrent requests would dial a new upstream connection for most
	// of them; a Go user running this under load raises it, so do we.
	transport := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        *conns,
		MaxIdleConnsPerHost: *conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
		},
		Transport:     transport,
		FlushInterval: -1,
	}
	srv := &http.Server{Addr: *addr, Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
