package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/internal/format"
)

// runPack implements `leakscope pack`.
func runPack(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("pack", "pack BUNDLE [-o ARCHIVE]",
		`Packs a bundle directory into one archive file, to attach to a ticket, copy
off a node or upload later. The format follows the name: .tar.zst (default)
or .tar.gz. Every command that reads a bundle (inspect, report, upload,
ingest -o) takes the archive as it is. Without -o the archive is written
beside the bundle: node1.lsb gives node1.tar.zst. An existing file is not
overwritten.`, stderr)
	out := fs.String("o", "", "archive `FILE` to write (.tar.zst or .tar.gz)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("pack: give exactly one bundle directory")
	}
	dir := pos[0]
	if *out == "" {
		*out = filepath.Join(filepath.Dir(filepath.Clean(dir)), archiveStem(dir)+"."+bundle.FormatTarZstd)
	}
	if bundle.FormatFromName(*out) == "" {
		return usagef("pack: -o %s: the archive's name must end in .tar.zst or .tar.gz", *out)
	}
	if st, err := os.Stat(dir); !exists(dir) {
		return fmt.Errorf("pack: %w", notBundle(dir, "nothing is there"))
	} else if err != nil {
		return fmt.Errorf("pack: %w", err)
	} else if !st.IsDir() {
		return fmt.Errorf("pack: %s is a file, not a bundle directory (already an archive?)", dir)
	}
	if err := isBundleDir(dir); err != nil {
		return fmt.Errorf("pack: %w", err)
	}
	if exists(*out) {
		return fmt.Errorf("pack: %s already exists; remove it or choose another name with -o", *out)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := writeArchive(dir, *out); err != nil {
		return err
	}
	st, err := os.Stat(*out)
	if err != nil {
		return err
	}
	printf(stdout, "packed %s into %s (%s)\n", dir, *out, format.Value(st.Size(), "bytes"))
	return nil
}
