// Command jobtriage triages a Laravel application's failed queue jobs directly
// in its database.
package main

import (
	"os"

	"github.com/jobtriage/jobtriage/cmd"
)

func main() {
	os.Exit(int(cmd.Main()))
}
