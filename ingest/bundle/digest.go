package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// Digest returns a SHA-256 over the files [Pack] would pack from dir (their
// bundle-relative names, sizes and contents, in name order). Two bundles
// with the same digest hold the same data whatever archive or copy they
// came through; a workbench uses it to store an upload only once.
func Digest(dir string) (string, error) {
	names, err := packList(dir)
	if err != nil {
		return "", fmt.Errorf("digest %s: %w", dir, err)
	}
	h := sha256.New()
	for _, name := range names {
		if err := digestFile(h, dir, name); err != nil {
			return "", fmt.Errorf("digest %s: %w", dir, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func digestFile(h io.Writer, dir, name string) error {
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	io.WriteString(h, name+"\x00"+strconv.FormatInt(st.Size(), 10)+"\x00")
	n, err := io.Copy(h, io.LimitReader(f, st.Size()))
	if err == nil && n != st.Size() {
		err = fmt.Errorf("%s shrank while reading (%d of %d bytes)", name, n, st.Size())
	}
	return err
}
