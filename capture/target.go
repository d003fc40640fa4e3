package capture

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/leakscope/leakscope/ingest/binsyms"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// TargetInfo describes the process pid from /proc/PID/exe: executable path,
// Go version, module path and Go build id. Fields it cannot read stay empty;
// the error says what was missing.
func TargetInfo(pid int) (bundle.Target, error) {
	t := bundle.Target{PID: pid}
	exe := fmt.Sprintf("/proc/%d/exe", pid)
	if p, err := os.Readlink(exe); err == nil {
		t.Exe = p
	}
	if at, err := ProcessStart(pid); err == nil {
		t.ProcessStart, t.ProcessStartFrom = at, fmt.Sprintf("/proc/%d/stat", pid)
	}
	if err := readBuildInfo(&t, exe); err != nil {
		return t, fmt.Errorf("read build info of pid %d: %w", pid, err)
	}
	t.BuildID, _ = goBuildID(exe)
	t.Methods, _ = binsyms.ReleaseMethods(exe) // none: analysis reads the library's source alone
	return t, nil
}

// checkGoProcess refuses a process whose executable is an ELF file
// without Go build info (every Go 1.18+ binary, stripped or not, has a
// .go.buildinfo section): leakscope captures Go programs only. An
// executable it cannot read is let through; the capture says what it
// could not read later.
func checkGoProcess(pid int) error {
	exe := fmt.Sprintf("/proc/%d/exe", pid)
	f, err := elf.Open(exe)
	if err != nil {
		return nil
	}
	defer f.Close()
	if f.Section(".go.buildinfo") != nil {
		return nil
	}
	name, _ := os.Readlink(exe)
	return fmt.Errorf("pid %d (%s) is not a Go program: its executable has no Go build info; leakscope captures Go processes (give the pid of the Go service)", pid, name)
}

// readBuildInfo fills t's Go version, main module and dependency modules
// from the executable's build info.
func readBuildInfo(t *bundle.Target, exe string) error {
	bi, err := buildinfo.ReadFile(exe)
	if err != nil {
		return err
	}
	t.GoVersion = bi.GoVersion
	t.ModulePath, t.ModuleVersion = bi.Main.Path, bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			t.VCSRevision = s.Value
		case "vcs.time":
			t.VCSTime, _ = time.Parse(time.RFC3339, s.Value)
		case "vcs.modified":
			t.VCSModified = s.Value == "true"
		}
	}
	for _, d := range bi.Deps {
		m := bundle.Module{Path: d.Path, Version: d.Version}
		if d.Replace != nil {
			m.Replace = d.Replace.Path
		}
		t.Deps = append(t.Deps, m)
	}
	return nil
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's start time: 100 on
// every Linux ABI, whatever the kernel's own tick rate.
const clockTicks = 100

// ProcessStart returns when process pid started: its start time in clock
// ticks after boot (/proc/PID/stat, field 22) plus the boot time (btime in
// /proc/stat).
func ProcessStart(pid int) (time.Time, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return time.Time{}, err
	}
	// pid (comm) state ppid ...: fields after the last ')' start at 3.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return time.Time{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 {
		return time.Time{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ticks, err := strconv.ParseInt(f[19], 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("/proc/%d/stat: start time %q", pid, f[19])
	}
	boot, err := bootTime()
	if err != nil {
		return time.Time{}, err
	}
	return boot.Add(time.Duration(ticks) * time.Second / clockTicks).UTC(), nil
}

// bootTime reads btime from /proc/stat.
func bootTime() (time.Time, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			sec, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("/proc/stat: btime %q", v)
			}
			return time.Unix(sec, 0), nil
		}
	}
	return time.Time{}, fmt.Errorf("/proc/stat: no btime")
}

// goBuildID reads the Go build id from the .note.go.buildid ELF note.
func goBuildID(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		return "", fmt.Errorf("%s: no Go build id note", path)
	}
	data, err := s.Data()
	if err != nil {
		return "", err
	}
	// namesz, descsz, type, name "Go\0\0", desc.
	if len(data) < 16 {
		return "", fmt.Errorf("%s: short build id note", path)
	}
	namesz := int(f.ByteOrder.Uint32(data))
	descsz := int(f.ByteOrder.Uint32(data[4:]))
	off := 12 + (namesz+3)&^3
	if off+descsz > len(data) || descsz < 0 {
		return "", fmt.Errorf("%s: bad build id note", path)
	}
	return string(data[off : off+descsz]), nil
}

// leakProfileHint says which runtimes serve the goroutineleak profile, and
// what the target runs when known.
func leakProfileHint(goVersion string) string {
	const need = "the runtime serves it from Go 1.27 on, and in Go 1.26 built with GOEXPERIMENT=goroutineleakprofile"
	if goVersion == "" {
		return need
	}
	return need + "; the target was built with " + goVersion
}
