package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/bundle/bundletest"
	"github.com/leakscope/leakscope/web"
)

// TestUploadToken uploads to a workbench that needs a token: upload reads
// LEAKSCOPE_TOKEN as serve does, and without it is refused.
func TestUploadToken(t *testing.T) {
	store, err := web.OpenStore(t.TempDir(), nil, bundle.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
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
