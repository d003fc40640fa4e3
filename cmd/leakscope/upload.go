package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/leakscope/leakscope/capture"
)

// runUpload implements `leakscope upload`.
func runUpload(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("upload", "upload BUNDLE --to URL [--token T]",
		`Send a bundle to a workbench (leakscope serve) as a streamed .tar.zst
(POST /api/captures). Connection errors and 5xx answers are retried with
backoff; the new capture id is printed on success.`, stderr)
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
	o.Log = stderr
	res, err := capture.Upload(ctx, pos[0], o)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "uploaded %s (%d bytes, %d attempt(s)): capture id %s\n", pos[0], res.Bytes, res.Attempts, res.ID)
	return nil
}
