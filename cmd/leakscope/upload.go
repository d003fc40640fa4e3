package main

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/leakscope/leakscope/capture"
	"github.com/leakscope/leakscope/internal/format"
)

// runUpload implements `leakscope upload`.
func runUpload(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("upload", "upload BUNDLE --to URL [--token T]",
		`Send a bundle (a directory or an archive) to a workbench (leakscope serve)
as a streamed .tar.zst (POST /api/captures). Connection errors and 5xx
answers are retried with backoff; the new capture id is printed on success.
A bundle the workbench already holds is not stored twice: the answer names
the capture it already is.`, stderr)
	var o capture.UploadOptions
	fs.StringVar(&o.To, "to", "", "workbench base URL, e.g. http://127.0.0.1:7070")
	fs.StringVar(&o.Token, "token", os.Getenv("LEAKSCOPE_TOKEN"), "bearer `token` for the workbench (default $LEAKSCOPE_TOKEN, as serve reads it)")
	fs.IntVar(&o.Attempts, "attempts", 5, "most tries on connection errors and 5xx answers")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("upload: need exactly one BUNDLE")
	}
	if o.To == "" {
		return usagef("upload: need --to URL")
	}
	o.Log, o.UserAgent = cleanWriter{stderr}, "leakscope-cli/"+version()
	dir, cleanup, err := openBundleDir(pos[0])
	if err != nil {
		return err
	}
	defer cleanup()
	res, err := capture.Upload(ctx, dir, o)
	if err != nil && dir != pos[0] {
		// Name the archive the user gave, not where it was unpacked.
		return errors.New(strings.ReplaceAll(err.Error(), dir, pos[0]))
	} else if err != nil {
		return err
	}
	what := "uploaded"
	if res.Duplicate {
		what = "already on the workbench"
	}
	printf(stdout, "%s %s (%s, %s): capture id %s\n", what, pos[0], format.Value(res.Bytes, "bytes"), format.Count(float64(res.Attempts), "attempt"), res.ID)
	return nil
}
