package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"
)

const maskWords = 16 // CPU masks for 1,024 CPUs

type cpuMask [maskWords]uint64

func setAffinity(tid int, m *cpuMask) syscall.Errno {
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid), uintptr(len(m)*8), uintptr(unsafe.Pointer(&m[0])))
	return errno
}

// allowed is the process's mask before the first pin (the harness starts this program with every
// CPU it may use).
var allowed *cpuMask

// pinThread pins the OS thread that runs the timing loops to one CPU, the one the harness's own
// timing thread is pinned to (its --cpu option), so that a Go cell and a TypeScript cell of the
// same case are timed on the same core, and moves every other thread of the process (the garbage
// collector's workers among them) to the other CPUs, as the harness does with its own. Threads
// the runtime starts later may inherit the pin: the harness sends `pin` before every timed case,
// which moves them off again.
func pinThread(cpu int) error {
	if cpu < 0 || cpu >= maskWords*64 {
		return fmt.Errorf("no CPU %d", cpu)
	}
	if allowed == nil {
		var m cpuMask
		if _, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, uintptr(len(m)*8), uintptr(unsafe.Pointer(&m[0]))); errno != 0 {
			return fmt.Errorf("sched_getaffinity: %v", errno)
		}
		allowed = &m
	}
	var one cpuMask
	one[cpu/64] = 1 << (cpu % 64)
	runtime.LockOSThread() // the main goroutine, which runs every command, stays on this thread
	if errno := setAffinity(0, &one); errno != 0 {
		return fmt.Errorf("sched_setaffinity to CPU %d: %v", cpu, errno)
	}
	others := *allowed
	others[cpu/64] &^= 1 << (cpu % 64)
	if others == (cpuMask{}) {
		return nil // one CPU only: nowhere else to go
	}
	self := syscall.Gettid()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil // no /proc: the other threads stay where the scheduler puts them
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil || tid == self {
			continue
		}
		setAffinity(tid, &others) // a thread that has ended meanwhile: nothing to move
	}
	return nil
}
