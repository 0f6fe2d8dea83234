// Command netserver is the baseline of the HTTP benchmark: Go's net/http
// answering every request with its own body, as examples/http-echo.yaml
// does. Run it with GOMAXPROCS=1 to compare with one Sluice worker.
package main

import (
	"flag"
	"io"
	"log"
	"net/http"
	"strconv"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	flag.Parse()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
	log.Fatal(http.ListenAndServe(*addr, h))
}
