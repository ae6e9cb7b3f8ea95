//go:build unix

package sqlstore

import (
	"io/fs"
	"strconv"
	"syscall"
)

// fileID is a file's device and inode: another file under the same path
// has another.
func fileID(fi fs.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return strconv.FormatUint(uint64(st.Dev), 10) + ":" + strconv.FormatUint(uint64(st.Ino), 10)
	}
	return ""
}
