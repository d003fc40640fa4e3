package corpus

import (
	"fmt"
	"strings"
)

// AddrFileEnv names the file the hook writes its loopback address to.
const AddrFileEnv = "LEAKSCOPE_PPROF_ADDR_FILE"

// hookSource is the file the harness adds to every program at build time
// (through go build -overlay, so the programs stay as they are): it serves
// net/http/pprof on a loopback port, as the services of our users do, and
// writes the address to the file named by $LEAKSCOPE_PPROF_ADDR_FILE. The
// server's goroutines are part of every dump, as they would be in a real
// service.
const hookSource = `package %s

// Added by leakscope's corpus harness (dev/corpus): serve pprof.

import (
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	path := os.Getenv(%q)
	if path == "" {
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(path+".tmp", []byte(ln.Addr().String()), 0o644); err != nil {
		panic(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		panic(err)
	}
	go http.Serve(ln, nil)
}
`

// hookFile returns the hook's source for package pkg and the name it gets
// in the program's directory (a _test.go file for test kernels).
func hookFile(pkg string, test bool) (name, src string) {
	name = "zz_leakscope_pprof.go"
	if test {
		name = strings.TrimSuffix(name, ".go") + "_test.go"
	}
	return name, fmt.Sprintf(hookSource, pkg, AddrFileEnv)
}
