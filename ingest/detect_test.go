package ingest

import (
	"bytes"
	"compress/gzip"
	"context"
	"runtime/pprof"
	"runtime/trace"
	"testing"
	"time"
)

// realArtifacts returns a heap profile, a goroutine dump and an execution
// trace written by this very test process.
func realArtifacts(t testing.TB) (heap, dump, tr []byte) {
	t.Helper()
	var hb, db, tb bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&hb, 0); err != nil {
		t.Fatal(err)
	}
	if err := pprof.Lookup("goroutine").WriteTo(&db, 2); err != nil {
		t.Fatal(err)
	}
	if err := trace.Start(&tb); err != nil {
		t.Fatal(err)
	}
	ctx, task := trace.NewTask(context.Background(), "detect")
	trace.WithRegion(ctx, "work", func() { time.Sleep(time.Millisecond) })
	task.End()
	trace.Stop()
	return hb.Bytes(), db.Bytes(), tb.Bytes()
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

func TestDetect(t *testing.T) {
	heap, dump, tr := realArtifacts(t)
	var ungz bytes.Buffer
	zr, _ := gzip.NewReader(bytes.NewReader(heap))
	ungz.ReadFrom(zr)
	cases := []struct {
		name string
		data []byte
		want Kind
	}{
		{"gzipped heap profile", heap, KindPprof},
		{"plain heap profile", ungz.Bytes(), KindPprof},
		{"legacy text profile", []byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n"), KindPprof},
		{"goroutine dump", dump, KindDump},
		{"gzipped dump", gz(dump), KindDump},
		{"panic traceback", []byte("panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n\t/x/main.go:5 +0x25\nexit status 2\n"), KindDump},
		{"execution trace", tr, KindTrace},
		{"gzipped trace", gz(tr), KindTrace},
		{"empty", nil, KindUnknown},
		{"text", []byte("hello world\n"), KindLog},
		{"json", []byte(`{"a": 1}`), KindLog},
		{"png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), KindUnknown},
		{"broken gzip", heap[:5], KindUnknown},
	}
	for _, c := range cases {
		if got := Detect(c.data); got != c.want {
			t.Errorf("%s: Detect = %q, want %q", c.name, got, c.want)
		}
	}
}

// FuzzDetect checks that detection never panics and that whatever it
// recognises is recognised again when gzipped.
func FuzzDetect(f *testing.F) {
	heap, dump, tr := realArtifacts(f)
	f.Add(heap)
	f.Add(dump[:min(len(dump), 4096)])
	f.Add(tr[:min(len(tr), 4096)])
	f.Add([]byte("goroutine 1 [running]:\n"))
	f.Add([]byte{0x5a, 0x04, 0x08, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		k := Detect(data)
		if k != KindUnknown && !(len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
			if g := Detect(gz(data)); g != k {
				t.Fatalf("Detect = %q, but %q once gzipped", k, g)
			}
		}
	})
}
