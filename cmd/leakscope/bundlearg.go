package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// A bundle argument is either a bundle directory (NAME.lsb) or an archive
// of one (NAME.tar.zst or NAME.tar.gz, as written by pack, capture and
// upload). Commands that read a bundle take both; commands that write one
// write an archive when the output's name says so.

// openBundleDir returns a bundle directory for path: path itself, or a
// temporary directory an archive is unpacked into (removed by cleanup).
func openBundleDir(path string) (string, func(), error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, notBundle(path, "nothing is there")
	}
	if err != nil {
		return "", nil, err
	}
	if st.IsDir() {
		if err := isBundleDir(path); err != nil {
			return "", nil, err
		}
		return path, func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	tmp, err := os.MkdirTemp("", "leakscope-bundle-")
	if err != nil {
		return "", nil, err
	}
	dst := filepath.Join(tmp, archiveStem(path)+".lsb")
	if _, err := bundle.Unpack(f, dst, bundle.Limits{}); err != nil {
		os.RemoveAll(tmp)
		if errors.Is(err, bundle.ErrArchive) {
			return "", nil, notBundle(path, "a file that is not a whole bundle archive ("+strings.TrimPrefix(err.Error(), bundle.ErrArchive.Error()+": ")+")")
		}
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	return dst, func() { os.RemoveAll(tmp) }, nil
}

// notBundle is the one message every command gives for an argument that
// is not a bundle: what is there instead, and what to give.
func notBundle(path, what string) error {
	return fmt.Errorf("%s is not a leakscope bundle (%s): give a bundle directory (NAME.lsb, as capture and ingest write) or an archive of one (NAME.tar.zst or .tar.gz, as pack writes)", path, what)
}

// isBundleDir checks that dir holds a bundle's manifest.
func isBundleDir(dir string) error {
	st, err := os.Stat(filepath.Join(dir, "manifest.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return notBundle(dir, "a directory without manifest.json")
	}
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return notBundle(dir, "its manifest.json is not a file")
	}
	return nil
}

// archiveStem is an archive's name without directory and extension:
// "out/node1.tar.zst" gives "node1"; a directory name loses ".lsb".
func archiveStem(path string) string {
	base := filepath.Base(path)
	for _, ext := range []string{".tar.zst", ".tzst", ".tar.gz", ".tgz", ".lsb"} {
		if len(base) > len(ext) && strings.EqualFold(base[len(base)-len(ext):], ext) {
			return base[:len(base)-len(ext)]
		}
	}
	return base
}

// writeArchive packs the bundle in dir into the archive file path (its
// format from the name), through a temporary file renamed into place, so
// that a failure never leaves half an archive under that name.
func writeArchive(dir, path string) error {
	format := bundle.FormatFromName(path)
	if format == "" {
		return fmt.Errorf("%s: not an archive name (want .tar.zst or .tar.gz)", path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(0o644)
	if err == nil {
		err = bundle.Pack(dir, f, format)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// exists reports whether path names anything at all.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
