//go:build !unix

package termbg

import (
	"os"
	"time"
)

// query does not ask elsewhere: Windows consoles have no OSC 11 answer
// worth waiting for.
func query(_, _ *os.File, _ time.Duration) (string, bool) { return "", false }
