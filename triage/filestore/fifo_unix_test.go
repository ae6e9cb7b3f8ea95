//go:build unix

package filestore_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jobtriage/jobtriage/triage/filestore"
)

// TestFIFOIsRefused: opening a named pipe would block until something
// writes to it; Open refuses anything but a regular file instead.
func TestFIFOIsRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "failed-jobs.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	if _, err := filestore.Open(fifo, nil); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("fifo: %v", err)
	}
}
