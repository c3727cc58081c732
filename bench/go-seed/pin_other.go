//go:build !linux

package main

import "errors"

// pinThread: pinning is Linux-only here (the harness pins nothing elsewhere).
func pinThread(cpu int) error {
	return errors.New("pinning to a CPU is only supported on Linux")
}
