package agent

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Selection says which processes the agent watches. Empty: none.
type Selection struct {
	PIDs []int
	// Exes are executable names, matched against the file name of
	// /proc/PID/exe and against /proc/PID/comm.
	Exes []string
	// All selects every Go process whose pprof endpoint can be found.
	All bool
}

// Empty reports whether the selection names no process at all.
func (s Selection) Empty() bool { return len(s.PIDs) == 0 && len(s.Exes) == 0 && !s.All }

// Process is one process on the node, as /proc shows it.
type Process struct {
	PID int
	// Start is the process start time in clock ticks since boot (field 22
	// of /proc/PID/stat): with the pid, it tells a process from a later
	// one that reused the pid.
	Start uint64
	Exe   string // path of /proc/PID/exe
	Comm  string
	// Pod is the container's host name (/proc/PID/root/etc/hostname),
	// which Kubernetes sets to the pod name; empty outside a container.
	Pod string
}

// Name is the executable's file name (comm when the exe is unreadable).
func (p Process) Name() string {
	if p.Exe != "" {
		return filepath.Base(p.Exe)
	}
	return p.Comm
}

// key identifies a process across pid reuse.
type key struct {
	pid   int
	start uint64
}

func (p Process) key() key { return key{p.PID, p.Start} }

// procRoot is /proc; tests do not change it, it names the dependency.
const procRoot = "/proc"

// readProcess reads what /proc says of pid.
func readProcess(pid int) (Process, error) {
	p := Process{PID: pid}
	stat, err := os.ReadFile(fmt.Sprintf("%s/%d/stat", procRoot, pid))
	if err != nil {
		return p, err
	}
	// comm is in parentheses and may hold spaces; fields follow the last ')'.
	s := string(stat)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return p, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	p.Comm = s[open+1 : end]
	fields := strings.Fields(s[end+1:])
	if len(fields) < 20 {
		return p, fmt.Errorf("/proc/%d/stat: %d fields after comm", pid, len(fields))
	}
	if p.Start, err = strconv.ParseUint(fields[19], 10, 64); err != nil {
		return p, fmt.Errorf("/proc/%d/stat: start time: %w", pid, err)
	}
	p.Exe, _ = os.Readlink(fmt.Sprintf("%s/%d/exe", procRoot, pid))
	if h, err := os.ReadFile(fmt.Sprintf("%s/%d/root/etc/hostname", procRoot, pid)); err == nil && inContainer(pid) {
		p.Pod = strings.TrimSpace(string(h))
	}
	return p, nil
}

// inContainer reports whether pid lives in a UTS namespace other than the
// agent's own, so its host name is a container's (a pod's), not the node's.
func inContainer(pid int) bool {
	self, err1 := os.Readlink(procRoot + "/self/ns/uts")
	other, err2 := os.Readlink(fmt.Sprintf("%s/%d/ns/uts", procRoot, pid))
	return err1 == nil && err2 == nil && self != other
}

// isGo reports whether the process runs a Go executable (it has Go build
// information).
func isGo(pid int) bool {
	_, err := buildinfo.ReadFile(fmt.Sprintf("%s/%d/exe", procRoot, pid))
	return err == nil
}

// listPIDs returns the pids of every process on the node.
func listPIDs() ([]int, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out, nil
}

// candidates returns the processes the selection could mean, before their
// pprof endpoints are looked for. Self is never a candidate.
func (s Selection) candidates() ([]Process, error) {
	self := os.Getpid()
	var pids []int
	if len(s.Exes) == 0 && !s.All {
		pids = s.PIDs
	} else {
		all, err := listPIDs()
		if err != nil {
			return nil, fmt.Errorf("list processes: %w", err)
		}
		pids = all
	}
	want := map[int]bool{}
	for _, p := range s.PIDs {
		want[p] = true
	}
	var out []Process
	for _, pid := range pids {
		if pid == self {
			continue
		}
		p, err := readProcess(pid)
		if err != nil {
			continue // gone meanwhile, or a kernel thread
		}
		if want[pid] || s.matchesExe(p) || (s.All && p.Exe != "") {
			out = append(out, p)
		}
	}
	return out, nil
}

func (s Selection) matchesExe(p Process) bool {
	for _, e := range s.Exes {
		if e == p.Name() || e == p.Comm {
			return true
		}
	}
	return false
}
