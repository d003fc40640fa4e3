package bundle

import (
	"io/fs"
	"path/filepath"
)

// DirSize adds up the sizes of the regular files under dir (a bundle, a
// spool entry, a store); unreadable entries count as nothing.
func DirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
