// Package dumpgen produces large goroutine dumps for the dump package's
// benchmarks: preferably the real SIGQUIT traceback of a program holding
// n parked goroutines, else synthetic text in the same format.
package dumpgen

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// crashProg parks N goroutines across five distinct stacks, prints READY
// to stdout and waits for SIGQUIT.
const crashProg = `package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

var (
	block = make(chan int)
	sendc = make(chan int)
	mu    sync.Mutex
	wg    sync.WaitGroup
)

func recv()    { <-block }
func send()    { sendc <- 1 }
func sel()     { select { case <-block: case sendc <- 1: } }
func lock()    { mu.Lock() }
func sleeper() { time.Sleep(24 * time.Hour) }

//go:noinline
func nest(n int, f func()) {
	if n == 0 {
		f()
		return
	}
	nest(n-1, f)
}

func spawn(n int, started *sync.WaitGroup) {
	fs := []func(){recv, send, sel, lock, sleeper}
	for i := 0; i < n; i++ {
		f := fs[i%len(fs)]
		depth := i % 4
		go func() { started.Done(); nest(depth, f) }()
	}
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	mu.Lock()
	var started sync.WaitGroup
	started.Add(n)
	const spawners = 8
	for s := 0; s < spawners; s++ {
		k := n / spawners
		if s == spawners-1 {
			k = n - k*(spawners-1)
		}
		go spawn(k, &started)
	}
	started.Wait()
	time.Sleep(2 * time.Second)
	fmt.Println("READY")
	select {}
}
`

// Cached returns the path of a dump of n goroutines under
// os.TempDir()/leakscope-dump-bench, generating it the first time (a real
// crash when possible; logf reports how). The file is kept for later runs.
func Cached(n int, logf func(format string, args ...any)) (string, error) {
	dir := filepath.Join(os.TempDir(), "leakscope-dump-bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("goroutines-%d.txt", n))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	tmp := path + ".tmp"
	start := time.Now()
	err := Crash(tmp, n)
	if err == nil {
		logf("generated %s from a real SIGQUIT crash in %v", path, time.Since(start).Round(time.Millisecond))
	} else {
		logf("real crash failed (%v); writing synthetic dump", err)
		f, ferr := os.Create(tmp)
		if ferr != nil {
			return "", ferr
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		err = Synthesize(bw, n)
		if err == nil {
			err = bw.Flush()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(tmp)
			return "", err
		}
	}
	return path, os.Rename(tmp, path)
}

// Crash builds a program that parks n goroutines, kills it with SIGQUIT
// under GOTRACEBACK=all and writes its stderr to path.
func Crash(path string, n int) error {
	dir, err := os.MkdirTemp("", "crashprog")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(crashProg), 0o644); err != nil {
		return err
	}
	exe := filepath.Join(dir, "crashprog")
	if out, err := exec.Command("go", "build", "-o", exe, src).CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v: %s", err, out)
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.Command(exe, fmt.Sprint(n))
	cmd.Env = append(os.Environ(), "GOTRACEBACK=all")
	cmd.Stderr = out
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "READY\n" {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("crash program did not get ready: %q %v", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		return err
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		return fmt.Errorf("crash program: %v, want exit status 2", err)
	}
	st, err := out.Stat()
	if err != nil {
		return err
	}
	if st.Size() < int64(n)*100 {
		return fmt.Errorf("traceback of %d bytes is too short for %d goroutines", st.Size(), n)
	}
	return nil
}

// stacks are the bodies (frames and creator) of synthetic goroutines, in
// the format of a Go 1.26 SIGQUIT traceback; %[1]x is a varying address.
var stacks = []struct{ state, body string }{
	{"chan receive", `runtime.gopark(0x0?, 0x0?, 0x0?, 0x0?, 0x0?)
	/usr/local/go/src/runtime/proc.go:462 +0xce fp=0xc%[1]x sp=0xc%[1]x pc=0x43d7ee
runtime.chanrecv(0xc000020060, 0x0, 0x1)
	/usr/local/go/src/runtime/chan.go:667 +0x3bf fp=0xc%[1]x sp=0xc%[1]x pc=0x40a79f
runtime.chanrecv1(0x0?, 0x0?)
	/usr/local/go/src/runtime/chan.go:509 +0x12 fp=0xc%[1]x sp=0xc%[1]x pc=0x40a3b2
main.recv()
	/src/crashprog/main.go:17 +0x17 fp=0xc%[1]x sp=0xc%[1]x pc=0x4a1cb5
main.nest(0x0, 0x4c7a30)
	/src/crashprog/main.go:26 +0x1f fp=0xc%[1]x sp=0xc%[1]x pc=0x4a1d1f
main.spawn.func1()
	/src/crashprog/main.go:37 +0x3d fp=0xc%[1]x sp=0xc%[1]x pc=0x4a1e3d
runtime.goexit({})
	/usr/local/go/src/runtime/asm_amd64.s:1771 +0x1 fp=0xc%[1]x sp=0xc%[1]x pc=0x4695a1
created by main.spawn in goroutine 5
	/src/crashprog/main.go:37 +0x85
`},
	{"chan send", `runtime.gopark(0x0?, 0x0?, 0x0?, 0x0?, 0x0?)
	/usr/local/go/src/runtime/proc.go:462 +0xce fp=0xc%[1]x sp=0xc%[1]x pc=0x43d7ee
runtime.chansend(0xc0000200c0, 0x4c9f30, 0x1, 0x4a1c5a)
	/usr/local/go/src/runtime/chan.go:283 +0x3c5 fp=0xc%[1]x sp=0xc%[1]x pc=0x40a0c5
runtime.chansend1(0x0?, 0x0?)
	/usr/local/go/src/runtime/chan.go:161 +0x1d fp=0xc%[1]x sp=0xc%[1]x pc=0x409cdd
main.send()
	/src/crashprog/main.go:18 +0x25 fp=0xc%[1]x sp=0xc%[1]x pc=0x4a1c65
main.nest(0x1, 0x4c7a38)
	/src/crashprog/main.go:29 +0x2c fp=0xc%[1]x sp=0xc%[1]x pc=0x4a1d2c
main.nest(0x2?, 0x4c7a38)
	/src/crashprog/main.go:29 +0x2c fp=0xc%[1]x sp=0xc%[1]x pc=0x4a1d2c
main.spawn.func1()
	/src/crashprog/main.go:37 +0x3d fp=0xc%[1]x sp=0xc%[1]x pc=0x4a1e3d
runtime.goexit({})
	/usr/local/go/src/runtime/asm_amd64.s:1771 +0x1 fp=0xc%[1]x sp=0xc%[1]x pc=0x4695a1
created by main.spawn in goroutine 6
	/src/crashprog/main.go:37 +0x85
`},
	{"sync.Mutex.Lock", `runtime.gopark(0x0?, 0x0?, 0x0?, 0x0?, 0x0?)
	/usr/local/go/src/runtime/proc.go:462 +0xce fp=0xc%[1]x sp=0xc%[1]x pc=0x43d7ee
runtime.goparkunlock(...)
	/usr/local/go/src/runtime/proc.go:468
runtime.semacquire1(0x6a4308, 0x0, 0x3, 0x2, 0x15)
	/usr/local/go/src/runtime/sema.go:192 +0x21d fp=0xc%[1]x sp=0xc%[1]x pc=0x44e9dd
internal/sync.runtime_SemacquireMutex(0x2?, 0xb?, 0xc%[1]x?)
	/usr/local/go/src/runtime/sema.go:95 +0x25 fp=0xc%[1]x sp=0xc%[1]x pc=0x46a825
internal/sync.(*Mutex).lockSlow(0x6a4308)
	/usr/local/go/src/internal/sync/mutex.go:149 +0x15d fp=0xc%[1]x sp=0xc%[1]x pc=0x47b2dd
internal/sync.(*Mutex).Lock(...)
	/usr/local/go/src/internal/sync/mutex.go:70
sync.(*Mutex).Lock(...)
	/usr/local/go/src/sync/mutex.go:46
main.lock()
	/src/crashprog/main.go:20 +0x45 fp=0xc%[1]x sp=0xc%[1]x pc=0x4a1c85
main.nest(0x3?, 0x4c7a48)
	/src/crashprog/main.go:26 +0x1f fp=0xc%[1]x sp=0xc%[1]x pc=0x4a1d1f
main.spawn.func1()
	/src/crashprog/main.go:37 +0x3d fp=0xc%[1]x sp=0xc%[1]x pc=0x4a1e3d
runtime.goexit({})
	/usr/local/go/src/runtime/asm_amd64.s:1771 +0x1 fp=0xc%[1]x sp=0xc%[1]x pc=0x4695a1
created by main.spawn in goroutine 7
	/src/crashprog/main.go:37 +0x85
`},
}

// Synthesize writes a SIGQUIT-style traceback of n goroutines cycling
// through a few stacks, with varying ids, addresses and wait times.
func Synthesize(w io.Writer, n int) error {
	if _, err := io.WriteString(w, "SIGQUIT: quit\nPC=0x48cca1 m=0 sigcode=0\n\ngoroutine 0 gp=0x684740 m=0 mp=0x685500 [idle]:\nruntime.futex(0x685658, 0x80, 0x0, 0x0, 0x0, 0x0)\n\t/usr/local/go/src/runtime/sys_linux_amd64.s:569 +0x21 fp=0x7ffcbe9da420 sp=0x7ffcbe9da418 pc=0x48cca1\n"); err != nil {
		return err
	}
	var sb strings.Builder
	for i := 0; i < n; i++ {
		s := stacks[i%len(stacks)]
		sb.Reset()
		fmt.Fprintf(&sb, "\ngoroutine %d gp=0xc%010x m=nil [%s", i+10, i*0x1e0, s.state)
		if m := i % 7; m > 0 {
			fmt.Fprintf(&sb, ", %d minutes", m)
		}
		sb.WriteString("]:\n")
		fmt.Fprintf(&sb, s.body, 0x10000000+i*0x800)
		if _, err := io.WriteString(w, sb.String()); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "\nrax    0xca\nrbx    0x0\nrip    0x48cca1\n")
	return err
}
