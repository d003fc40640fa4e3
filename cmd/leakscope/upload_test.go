package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/leakscope/leakscope/capture"
	"github.com/leakscope/leakscope/dev/bundletest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/web"
)

// TestUploadToken uploads to a workbench that needs a token: upload reads
// LEAKSCOPE_TOKEN as serve does, and without it is refused.
func TestUploadToken(t *testing.T) {
	store, err := web.OpenStore(t.TempDir(), nil, bundle.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Wait)
	srv := httptest.NewServer(web.NewRouter(store, web.Options{Token: "t0k3n"}))
	defer srv.Close()
	dir := bundletest.Small(t, t.TempDir(), "up")
	var out, errb bytes.Buffer
	t.Setenv("LEAKSCOPE_TOKEN", "")
	if err := run(context.Background(), []string{"upload", dir, "--to", srv.URL, "--attempts", "1"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("upload without token: %v", err)
	}
	t.Setenv("LEAKSCOPE_TOKEN", "t0k3n")
	if err := run(context.Background(), []string{"upload", dir, "--to", srv.URL}, &out, &errb); err != nil {
		t.Fatalf("upload with LEAKSCOPE_TOKEN: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "capture id") {
		t.Errorf("output %q", out.String())
	}
}

// TestUploadRefusals: the workbench's 413 says whether the capture can
// never fit (larger than --max-upload or --max-unpacked) or there is no
// room for it now (its quota), so that the agent stops retrying the
// first only; and the command line's uploads are counted as its own.
func TestUploadRefusals(t *testing.T) {
	dir := bundletest.Small(t, t.TempDir(), "up")
	for name, c := range map[string]struct {
		opts     web.Options
		quota    int64
		tooLarge bool
	}{
		"past --max-upload": {web.Options{Loopback: true, MaxUploadBytes: 512}, 0, true},
		"past the quota":    {web.Options{Loopback: true}, 1024, false},
	} {
		store, err := web.OpenStore(t.TempDir(), nil, bundle.Limits{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(store.Wait)
		if c.quota > 0 {
			store.SetQuota(c.quota)
		}
		srv := httptest.NewServer(web.NewRouter(store, c.opts))
		_, err = capture.Upload(context.Background(), dir, capture.UploadOptions{To: srv.URL, Attempts: 1})
		var ue *capture.UploadError
		if !errors.As(err, &ue) || ue.Code != http.StatusRequestEntityTooLarge || ue.TooLarge != c.tooLarge {
			t.Errorf("%s: %v (%+v), want 413 with TooLarge %v", name, err, ue, c.tooLarge)
		}
		srv.Close()
	}
	store, err := web.OpenStore(t.TempDir(), nil, bundle.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Wait)
	srv := httptest.NewServer(web.NewRouter(store, web.Options{Loopback: true}))
	defer srv.Close()
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"upload", dir, "--to", srv.URL}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(srv.URL + web.MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `leakscope_uploads_total{client="cli",result="stored"} 1`) {
		t.Errorf("the upload is not counted as the command line's:\n%s", body)
	}
	store.Wait()
}
