//go:build linux

package probe

import (
	"os"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
)

func expAttach(b *testing.B, sym string, ret bool, off0 int64) []link.Link {
	bin, err := OpenBinary("/proc/self/exe")
	if err != nil {
		b.Fatal(err)
	}
	defer bin.Close()
	fn, err := bin.Func(sym)
	if err != nil {
		b.Fatal(err)
	}
	var offs []uint64
	if ret {
		offs, _ = bin.RetOffsets(fn)
	} else if off0 >= 0 {
		offs = []uint64{uint64(off0)}
	} else {
		o, _, _ := bin.PrologueEnd(fn)
		offs = []uint64{o}
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.Kprobe, License: progLicense,
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}})
	if err != nil {
		b.Fatal(err)
	}
	ex, err := link.OpenExecutable("/proc/self/exe")
	if err != nil {
		b.Fatal(err)
	}
	var ls []link.Link
	for _, o := range offs {
		l, err := ex.Uprobe("", prog, &link.UprobeOptions{Address: fn.FileOffset, Offset: o, PID: os.Getpid()})
		if err != nil {
			b.Fatal(err)
		}
		ls = append(ls, l)
	}
	b.Logf("%s offs %x", sym, offs)
	return ls
}

func expRun(b *testing.B, attach func() []link.Link) {
	requirePrivileged(b)
	var off, on float64
	for i := 0; i < b.N; i++ {
		spawnBatch()
		off += spawnBatch()
		ls := attach()
		spawnBatch()
		on += spawnBatch()
		for _, l := range ls {
			l.Close()
		}
	}
	n := float64(b.N)
	b.ReportMetric(off/n, "ns/spawn-off")
	b.ReportMetric(on/n, "ns/spawn-on")
	b.ReportMetric((on-off)/n, "ns/extra")
}

func BenchmarkExpEmpty(b *testing.B) {
	b.Run("create-ret", func(b *testing.B) {
		expRun(b, func() []link.Link { return expAttach(b, "runtime.newproc1", true, -1) })
	})
	b.Run("exit-push", func(b *testing.B) {
		expRun(b, func() []link.Link { return expAttach(b, "runtime.goexit1", false, -1) })
	})
	b.Run("exit-entry-cmp", func(b *testing.B) {
		expRun(b, func() []link.Link { return expAttach(b, "runtime.goexit1", false, 0) })
	})
	b.Run("exit-jbe", func(b *testing.B) {
		expRun(b, func() []link.Link { return expAttach(b, "runtime.goexit1", false, 4) })
	})
}
