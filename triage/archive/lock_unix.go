//go:build unix

package archive

import (
	"os"
	"syscall"
)

// lockFile locks the archive without waiting: two writers would interleave.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// errSyncUnsupported: a file system that cannot fsync a directory needn't.
var errSyncUnsupported = syscall.EINVAL
