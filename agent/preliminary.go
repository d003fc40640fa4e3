package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leakscope/leakscope/capture"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// preliminaryDir is the copy of a running capture's bundle that is
// uploaded as the preliminary capture; it is removed once sent.
const preliminaryDir = "preliminary.lsb"

// preliminaryUploadTimeout bounds the preliminary upload: the capture
// waits for its first answer before closing its bundle.
const preliminaryUploadTimeout = 30 * time.Second

// captureLink is the workbench link of a capture id (UPLOAD_TO/c/ID,
// which the workbench redirects to the capture holding it, preliminary or
// final), or "" when the agent uploads nowhere.
func (a *Agent) captureLink(captureID string) string {
	if a.cfg.UploadTo == "" || captureID == "" {
		return ""
	}
	return a.workbenchBase() + "/c/" + captureID
}

// workbenchBase is the workbench's base URL, from Config.UploadTo.
func (a *Agent) workbenchBase() string {
	base := strings.TrimSuffix(strings.TrimRight(a.cfg.UploadTo, "/"), capture.CapturesPath)
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	return base
}

// linkSuffix is "; workbench LINK" for a log line, or "".
func (a *Agent) linkSuffix(captureID string) string {
	if l := a.captureLink(captureID); l != "" {
		return "; workbench " + l
	}
	return ""
}

// uploadPreliminary copies the running capture's bundle in dir, marked
// preliminary, and uploads the copy; the workbench shows it until the
// final bundle of the same capture id replaces it. It returns the
// preliminary capture's workbench id.
func (a *Agent) uploadPreliminary(e *Entry, dir string) (string, error) {
	dst := a.spool.Path(e, preliminaryDir)
	defer os.RemoveAll(dst)
	if err := copyPreliminary(dir, dst); err != nil {
		return "", fmt.Errorf("copy the bundle: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), preliminaryUploadTimeout)
	defer cancel()
	res, err := capture.Upload(ctx, dst, capture.UploadOptions{
		To: a.cfg.UploadTo, Token: a.cfg.UploadToken, Client: a.uploadClient(), Attempts: 2,
		Log: logWriter{a: a, prefix: e.Name + ": preliminary: "},
	})
	if err != nil {
		return "", err
	}
	return res.ID, nil
}

// copyPreliminary copies the bundle being written in src to dst as it
// stands: the manifest first (marked preliminary, ending at its last
// flush), then the tables cut at their present size (a reader keeps their
// complete batches) and the raw files the manifest lists, hard-linked
// (they no longer change).
func copyPreliminary(src, dst string) error {
	m, err := bundle.ReadManifest(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dst, bundle.RawDir), 0o750); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, de := range entries {
		if de.Type().IsRegular() && strings.HasSuffix(de.Name(), ".arrow") {
			if err := copyPrefix(filepath.Join(src, de.Name()), filepath.Join(dst, de.Name())); err != nil {
				return err
			}
		}
	}
	for _, art := range m.Artifacts {
		name, ok := strings.CutPrefix(art.Name, bundle.RawDir+"/")
		if !ok || name == "" || name != filepath.Base(name) {
			continue
		}
		from, to := filepath.Join(src, bundle.RawDir, name), filepath.Join(dst, bundle.RawDir, name)
		if _, err := os.Stat(from); err != nil {
			continue // not kept (a failed request)
		}
		if err := os.Link(from, to); err != nil {
			if err := copyPrefix(from, to); err != nil {
				return err
			}
		}
	}
	markPreliminary(&m)
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dst, bundle.ManifestFile), append(data, '\n'), 0o640)
}

// markPreliminary marks a manifest copied from a running capture.
func markPreliminary(m *bundle.Manifest) {
	m.Preliminary = true
	if m.End.Before(m.LastFlush) {
		m.End = m.LastFlush
	}
	for i := range m.Sources {
		if s := &m.Sources[i]; s.Status == bundle.StatusRunning {
			s.Detail = joinNote(s.Detail, "preliminary copy taken after the first dump; the capture went on")
		}
	}
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// copyPrefix copies the bytes src holds now to dst.
func copyPrefix(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, io.LimitReader(in, st.Size()))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
