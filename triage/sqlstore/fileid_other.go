//go:build !unix

package sqlstore

import "io/fs"

// fileID is empty where the system gives no inode: the path and the
// table's root page identify the database alone.
func fileID(fs.FileInfo) string { return "" }
