package bundle

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/leakscope/leakscope/ingest/killpoint"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Adding to an existing bundle is a transaction. Everything it writes —
// each table it touches (a copy of the bundle's, with the new rows), the
// originals under raw/, the new manifest — goes to a staging directory
// .staging-ID inside the bundle. Committing renames the staging directory
// to .commit-ID: that one rename is the commit. The files are then moved
// into place, the manifest last, and the directory removed. A process
// killed before the commit leaves a staging directory, which is removed
// when the bundle is next opened; one killed after it leaves a commit
// directory, whose files are moved into place when the bundle is next
// opened. Either way the bundle holds the whole addition or none of it.
//
// A transaction holds an exclusive lock on .lock in the bundle, so two
// writers cannot interleave and recovery never touches a live writer's
// staging directory.

const (
	lockFile      = ".lock"
	stagingPrefix = ".staging-"
	commitPrefix  = ".commit-"
)

// ErrBusy is wrapped by the error for a bundle another process is adding
// to.
var ErrBusy = errors.New("another process is adding to this bundle")

// lockBundle takes the bundle's lock, waiting for it when wait is set.
func lockBundle(dir string, wait bool) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("bundle %s: %w", dir, ErrBusy)
		}
		return nil, err
	}
	return f, nil
}

// unlock releases a lock taken by lockBundle.
func unlock(f *os.File) {
	if f != nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}

// leftovers lists the staging and commit directories in dir.
func leftovers(dir string) (staging, commits []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasPrefix(name, stagingPrefix):
			staging = append(staging, filepath.Join(dir, name))
		case strings.HasPrefix(name, commitPrefix):
			commits = append(commits, filepath.Join(dir, name))
		}
	}
	sort.Strings(commits)
	return staging, commits, nil
}

// Recover finishes what an interrupted transaction left in dir: a
// committed one is moved into place, an uncommitted one removed. It waits
// for a transaction that is committing; one still being written is left
// alone. Open calls it; a bundle that needs recovery and cannot be written
// to is refused.
func Recover(dir string) error {
	staging, commits, err := leftovers(dir)
	if err != nil || len(staging)+len(commits) == 0 {
		return nil
	}
	lock, err := lockBundle(dir, len(commits) > 0)
	if errors.Is(err, ErrBusy) {
		return nil // a live writer's staging directory
	}
	if err != nil {
		if len(commits) > 0 {
			return fmt.Errorf("bundle %s has an interrupted commit (%s) that cannot be finished here (%v); open it once with write access", dir, filepath.Base(commits[0]), err)
		}
		return nil
	}
	defer unlock(lock)
	return recoverLocked(dir)
}

// recoverLocked is Recover with the lock held.
func recoverLocked(dir string) error {
	staging, commits, err := leftovers(dir)
	if err != nil {
		return err
	}
	for _, c := range commits {
		if err := rollForward(dir, c); err != nil {
			return fmt.Errorf("bundle %s: finish interrupted commit %s: %w", dir, filepath.Base(c), err)
		}
	}
	for _, s := range staging {
		if err := os.RemoveAll(s); err != nil {
			return fmt.Errorf("bundle %s: remove interrupted addition %s: %w", dir, filepath.Base(s), err)
		}
	}
	return nil
}

// newStaging makes a staging directory in dir.
func newStaging(dir string) (string, error) {
	var b [8]byte
	rand.Read(b[:])
	stage := filepath.Join(dir, stagingPrefix+hex.EncodeToString(b[:]))
	if err := os.MkdirAll(filepath.Join(stage, RawDir), 0o755); err != nil {
		return "", err
	}
	return stage, nil
}

// commit writes the manifest into the staging directory, commits with one
// rename and moves the files into place.
func commit(dir, stage string, m Manifest) error {
	if err := writeManifest(stage, m); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	killpoint.At("bundle:staged")
	done := filepath.Join(dir, commitPrefix+strings.TrimPrefix(filepath.Base(stage), stagingPrefix))
	if err := os.Rename(stage, done); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	killpoint.At("bundle:committed")
	return rollForward(dir, done)
}

// rollForward moves a committed transaction's files into place: the
// originals, the tables, then the manifest; then removes the directory.
// It is idempotent: files already moved are skipped.
func rollForward(dir, done string) error {
	raws, err := os.ReadDir(filepath.Join(done, RawDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if len(raws) > 0 {
		if err := os.MkdirAll(filepath.Join(dir, RawDir), 0o755); err != nil {
			return err
		}
	}
	for _, e := range raws {
		if err := os.Rename(filepath.Join(done, RawDir, e.Name()), filepath.Join(dir, RawDir, e.Name())); err != nil {
			return err
		}
		killpoint.At("bundle:moved-raw")
	}
	for _, table := range schema.TableNames {
		err := os.Rename(tablePath(done, table), tablePath(dir, table))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		killpoint.At("bundle:moved-table")
	}
	err = os.Rename(filepath.Join(done, ManifestFile), filepath.Join(dir, ManifestFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	killpoint.At("bundle:moved-manifest")
	return os.RemoveAll(done)
}
