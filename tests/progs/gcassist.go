// gcassist.go - Go code that leaves its goroutine's stack for the
// thread's: the main goroutine, locked to the main thread, replaces
// pointers in a 12 MiB heap with the collector's target at 5 %, so the
// collector runs all the time and makes it help (mark assists).  An
// assist runs on the thread's system stack, the process's own [stack]
// for the main thread, which has a base:
//
//	runtime.systemstack -> runtime.gcAssistAlloc.func1 -> runtime.gcAssistAlloc1 -> runtime.gcDrainN -> ...
//
// Above runtime.systemstack in that stack lie stale frames of earlier
// switches, not its callers: a walk must end there.  The collector's
// own workers do the same on their threads' system stacks.
//
// Usage: gcassist [MS]  MS: CPU milliseconds of the main thread (default 300)
package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"unsafe"
)

func init() { runtime.LockOSThread() }

// threadCPU is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() int64 {
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

type node struct {
	next *node
	pad  [4]*node
}

var live []*node

//go:noinline
func churn(ns int64) {
	live = make([]*node, 1<<18)
	for i := range live {
		live[i] = &node{}
	}
	debug.SetGCPercent(5)
	end := threadCPU() + ns
	for i := 0; threadCPU() < end; i++ {
		for j := 0; j < 1000; j++ {
			k := (i*1000 + j) * 7919 & (len(live) - 1)
			live[k] = &node{next: live[(k+1)&(len(live)-1)]}
		}
	}
}

func main() {
	ms := 300.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil && v > 0 {
			ms = v
		}
	}
	churn(int64(ms * 1e6))
}
