//go:build unix

package mutation

import (
	"os/exec"
	"syscall"
	"time"
)

// setProcessGroup starts cmd in a process group of its own and makes its
// cancellation kill the whole group (go test and the test binary it runs).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
}
