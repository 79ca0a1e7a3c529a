//go:build !unix

package mutation

import (
	"os/exec"
	"time"
)

// setProcessGroup only bounds the wait for cmd's output after its
// cancellation: process groups are a unix notion.
func setProcessGroup(cmd *exec.Cmd) { cmd.WaitDelay = 10 * time.Second }
