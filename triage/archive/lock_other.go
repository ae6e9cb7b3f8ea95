//go:build !unix

package archive

import (
	"errors"
	"os"
)

// lockFile: no lock here; never run two archived deletes into one file.
func lockFile(*os.File) error { return nil }

// errSyncUnsupported: directories cannot be fsynced here.
var errSyncUnsupported = errors.ErrUnsupported
