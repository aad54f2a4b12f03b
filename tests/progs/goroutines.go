// goroutines.go - Go code on goroutine stacks: the runtime allocates
// them in heap arenas and moves them as they grow, so they have no
// fixed base.  Known call paths, each worker on a goroutine of its own
// (locked to its thread, so that the thread's CPU clock is its own):
//
//	runtime.goexit -> main.main.func1 -> main.worker -> main.stageA -> main.leafA -> main.burn   (1 share)
//	runtime.goexit -> main.main.func1 -> main.worker -> main.stageB -> main.descend x 16 -> main.leafB -> main.burn   (2 shares)
//
// descend's frames (512 bytes each) make the goroutine's first stack grow,
// so the runtime copies it to a new place while it runs.
//
// Usage: goroutines [MS]  MS: CPU milliseconds of one share (default 200)
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"unsafe"
)

const workers = 2

var sink uint64

// threadCPU is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() int64 {
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

//go:noinline
func burn(ns int64) {
	end := threadCPU() + ns
	for threadCPU() < end {
		for i := uint64(0); i < 1<<16; i++ {
			sink += i
		}
	}
}

//go:noinline
func leafA(ns int64) { burn(ns) }

//go:noinline
func leafB(ns int64) { burn(ns) }

//go:noinline
func stageA(ns int64) { leafA(ns) }

//go:noinline
func descend(n int, ns int64) {
	var pad [512]byte
	pad[n%len(pad)] = byte(n)
	if n == 0 {
		leafB(ns)
	} else {
		descend(n-1, ns)
	}
	sink += uint64(pad[n%len(pad)])
}

//go:noinline
func stageB(ns int64) { descend(15, ns) }

//go:noinline
func worker(ns int64, wg *sync.WaitGroup) {
	defer wg.Done()
	runtime.LockOSThread()
	stageA(ns)
	stageB(2 * ns)
}

func main() {
	ms := 200.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			ms = v
		}
	}
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go worker(int64(ms*1e6), &wg)
	}
	wg.Wait()
	fmt.Println(sink)
}
