//go:build unix

package main

import (
	"errors"
	"syscall"
)

// processAlive reports whether process pid exists (signal 0 checks
// without sending). A process of another user answers EPERM: alive.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
