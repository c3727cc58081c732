package main

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"
)

// pinThread pins the OS thread that runs the timing loop to one CPU, the one the harness's own
// timing thread is pinned to (its --cpu option), so that a Go cell and a TypeScript cell of the
// same case are timed on the same core. Only this thread is pinned: the Go runtime's other
// threads (the garbage collector's workers among them) stay free, as the TypeScript runtime's are.
func pinThread(cpu int) error {
	const words = 16 // a mask for 1,024 CPUs
	if cpu < 0 || cpu >= words*64 {
		return fmt.Errorf("no CPU %d", cpu)
	}
	var mask [words]uint64
	mask[cpu/64] = 1 << (cpu % 64)
	runtime.LockOSThread() // the main goroutine, which runs every command, stays on this thread
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, uintptr(len(mask)*8), uintptr(unsafe.Pointer(&mask[0])))
	if errno != 0 {
		return fmt.Errorf("sched_setaffinity to CPU %d: %v", cpu, errno)
	}
	return nil
}
