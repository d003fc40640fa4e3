package main
import (
_ "github.com/google/pprof/profile"
_ "golang.org/x/exp/trace"
_ "github.com/cilium/ebpf"
_ "github.com/cilium/ebpf/ringbuf"
_ "github.com/cilium/ebpf/link"
_ "github.com/apache/arrow/go/v15/arrow/ipc"
_ "github.com/gorilla/mux"
_ "golang.org/x/arch/x86/x86asm"
_ "github.com/klauspost/compress/zstd"
)
func main(){}
