// Command cmd writes zz_headers_gen.go for the package in the current
// directory (go generate runs it in internal/protocol):
//
//	go generate ./internal/protocol
package main

import (
	"fmt"
	"os"

	"github.com/rocketd/rocketd/internal/protocol/internal/headergen"
)

func main() {
	src, err := headergen.Generate(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(headergen.OutputFile, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "headergen:", err)
		os.Exit(1)
	}
}
