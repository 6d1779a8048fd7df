// Command ggcr-registry serves go-containerregistry's in-memory registry (pkg/registry) with
// the OCI 1.1 Referrers API turned on, for acx-oci's tests: a second registry whose behaviour
// differs from CNCF Distribution's (native referrers, the config media type reported as a
// referrer's artifactType, no artifactType filter, no OCI-Subject header).
//
// It listens on 127.0.0.1:0 (or -addr), prints the port it got on stdout, and serves until
// killed or until its stdin closes (-stdin-exit), so a test run that dies cannot leave it behind.
//
// Build (GOPATH mode, from Debian's golang-github-google-go-containerregistry-dev):
//
//	GO111MODULE=off GOPATH=<unpacked>/usr/share/gocode go build -o ggcr-registry .
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (loopback only)")
	verbose := flag.Bool("v", false, "log every request to stderr")
	stdinExit := flag.Bool("stdin-exit", false, "exit when stdin reaches EOF (the parent went away)")
	flag.Parse()

	logger := log.New(io.Discard, "", 0)
	if *verbose {
		logger = log.New(os.Stderr, "ggcr ", log.LstdFlags)
	}
	handler := registry.New(registry.Logger(logger), registry.WithReferrersSupport(true))

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	if *stdinExit {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			os.Exit(0)
		}()
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}
