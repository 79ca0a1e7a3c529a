package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one daemon process slot: a role with a fixed listen port, its
// data directory (a node), and its current process, if any.
type proc struct {
	name    string // "coordinator", "logcoord", "n1", …
	role    string
	port    int
	dataDir string
	logPath string
	version int

	// life serialises the slot's lifecycle: the upgrade's drain and
	// restart, and a fault's kill and restart, never interleave.
	life sync.Mutex

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd's process has been waited for
	exit   *exitState    // cmd's exit, once exited is closed
	starts int
	paused bool
	pids   []int // every process started in the slot
}

// freePort returns a TCP port of 127.0.0.1 free right now, below the
// kernel's ephemeral range: a process restarts on its port, which an
// outgoing connection of another process could otherwise have taken as
// its local port meanwhile.
func freePort() (int, error) {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				low = v
			}
		}
	}
	if low > 12000 {
		for range 200 {
			port := 10000 + rand.IntN(low-10000)
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err == nil {
				l.Close()
				return port, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (p *proc) addr() string { return fmt.Sprintf("127.0.0.1:%d", p.port) }

// start starts a new process of p with args (the listen address and the
// ready file are added) and waits until it serves.
func (p *proc) start(bin string, env []string, args []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("%s: already running", p.name)
	}
	p.starts++
	ready := filepath.Join(filepath.Dir(p.logPath), fmt.Sprintf("%s.%d.ready", p.name, p.starts))
	log, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	all := append([]string{"--listen", p.addr(), "--ready-file", ready}, args...)
	cmd := exec.Command(bin, all...)
	cmd.Stdout = log
	cmd.Stderr = log
	cmd.Env = append(os.Environ(), env...)
	// Its own process group (a kill takes all of it), and killed if the
	// checker dies, so that nothing outlives the run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return err
	}
	p.pids = append(p.pids, cmd.Process.Pid)
	exited := make(chan struct{})
	st := &exitState{}
	p.cmd, p.exited, p.exit = cmd, exited, st
	go func() {
		err := cmd.Wait()
		_ = log.Close()
		st.err = err // read only after exited is closed
		close(exited)
	}()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			return nil
		}
		select {
		case <-exited:
			p.cmd = nil
			return fmt.Errorf("%s exited at start (%v): %s", p.name, st.err, lastLine(p.logPath))
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			p.cmd = nil
			return fmt.Errorf("%s not ready after 15s: see %s", p.name, p.logPath)
		}
	}
}

// running reports whether p has a live process.
func (p *proc) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil
}

// signal sends sig to p's process; false if there is none.
func (p *proc) signal(sig syscall.Signal) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	if sig == syscall.SIGSTOP {
		p.paused = true
	}
	if sig == syscall.SIGCONT {
		p.paused = false
	}
	return p.cmd.Process.Signal(sig) == nil
}

// wait waits for p's process to exit, at most d, and returns its exit
// error (nil for exit 0); ok is false on the timeout.
func (p *proc) wait(ctx context.Context, d time.Duration) (err error, ok bool) {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	if exited == nil {
		return nil, true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
		return nil, false
	case <-ctx.Done():
		return ctx.Err(), false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited == exited { // not a process started since
		p.cmd = nil
	}
	return p.exitOf(exited), true
}

// exitOf returns the exit error of the process whose exited channel is
// exited (closed): the current one's, or nil for an older one.
func (p *proc) exitOf(exited chan struct{}) error {
	if p.exited == exited && p.exit != nil {
		return p.exit.err
	}
	return nil
}

// exitState is a process's exit error, written before its exited
// channel is closed.
type exitState struct{ err error }

// lastLine returns the last non-empty line of the file at path.
func lastLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "see " + path
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// kill SIGKILLs p's process group and waits for it.
func (p *proc) kill() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
	p.mu.Lock()
	if p.exited == exited { // not a process started since
		p.cmd = nil
		p.paused = false
	}
	p.mu.Unlock()
}

// exitCode returns the exit code of an exit error (0 for nil, -1 for a
// signal).
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err == nil {
		return 0
	}
	return -1
}

// logLines returns the lines of p's log that contain s.
func (p *proc) logLines(s string) []string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}
