package binsyms

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestReleaseMethodsOfTestBinary reads this test binary, which links
// os.(*File).Close (the testing package closes files), and checks the
// release methods found are methods, sorted.
func TestReleaseMethodsOfTestBinary(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ms, err := ReleaseMethods(exe)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ms, "os.(*File).Close") {
		t.Errorf("os.(*File).Close not among %d release methods", len(ms))
	}
	if !slices.IsSorted(ms) {
		t.Error("not sorted")
	}
	for _, m := range ms {
		if !IsRelease(m) {
			t.Errorf("%s is not a release method", m)
		}
	}
}

func TestIsRelease(t *testing.T) {
	for fn, want := range map[string]bool{
		"database/sql.(*DB).Close":                               true,
		"k8s.io/client-go/util/workqueue.(*Typed[...]).ShutDown": true,
		"net/http.(*Transport).CloseIdleConnections":             true,
		"time.(*Timer).Stop":                                     true,
		"os.Close":                                               false, // a function, not a method
		"database/sql.(*DB).Close.func1":                         false,
		"main.Stop":                                              false,
		"github.com/a/b.T.Shutdown":                              true,
		"database/sql.(*DB).Query":                               false,
	} {
		if got := IsRelease(fn); got != want {
			t.Errorf("IsRelease(%q) = %v, want %v", fn, got, want)
		}
	}
}

// TestReleaseMethodsBadFile names the file that is not an executable.
func TestReleaseMethodsBadFile(t *testing.T) {
	_, err := ReleaseMethods("binsyms.go")
	if err == nil || !strings.Contains(err.Error(), "binsyms.go") {
		t.Errorf("error %v does not name the file", err)
	}
}
