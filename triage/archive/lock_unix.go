//go:build unix

package archive

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on the archive without waiting: two
// runs appending to one archive at once would interleave their batches.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// errSyncUnsupported is what fsync of a directory returns where a file
// system cannot (it is then not needed).
var errSyncUnsupported = syscall.EINVAL
