//go:build !unix

package archive

import (
	"errors"
	"os"
)

// lockFile: no advisory lock here; the operator must not run two archived
// deletes into one file at once.
func lockFile(*os.File) error { return nil }

// errSyncUnsupported: directories cannot be fsynced here.
var errSyncUnsupported = errors.ErrUnsupported
