// Command gendocs regenerates the command reference from the command tree:
// Markdown under docs/reference and man pages under docs/man. Run it from the
// module root after changing a command, a flag or a help text:
//
//	go run ./internal/gendocs
//
// cmd's TestReferenceIsCurrent fails while the committed files differ.
package main

import (
	"fmt"
	"os"

	"github.com/jobtriage/jobtriage/cmd"
)

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := cmd.GenDocs(dir); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
