package probe

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// LoadBias returns how far the kernel placed process pid's executable from
// its link-time addresses: 0 for ordinary (non-PIE) Go binaries. Runtime
// PCs minus the bias are binary addresses.
func LoadBias(pid int, bin *Binary) (uint64, error) {
	if !bin.pie {
		return 0, nil
	}
	var text *elf.Prog
	for _, p := range bin.elf.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			text = p
			break
		}
	}
	if text == nil {
		return 0, fmt.Errorf("load bias: %s has no executable segment", bin.path)
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return 0, fmt.Errorf("load bias: %w", err)
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return 0, fmt.Errorf("load bias: %w", err)
	}
	defer f.Close()
	const page = 4096
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || strings.Join(fields[5:], " ") != exe || !strings.Contains(fields[1], "x") {
			continue
		}
		start, err1 := strconv.ParseUint(strings.SplitN(fields[0], "-", 2)[0], 16, 64)
		off, err2 := strconv.ParseUint(fields[2], 16, 64)
		if err1 != nil || err2 != nil || off != text.Off&^(page-1) {
			continue
		}
		return start - text.Vaddr&^(page-1), nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("load bias: read /proc/%d/maps: %w", pid, err)
	}
	return 0, fmt.Errorf("load bias: no executable mapping of %s in process %d", exe, pid)
}
