package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// deadPID returns the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	pid := cmd.Process.Pid
	require.False(t, processAlive(pid), "pid %d was reused at once", pid)
	return pid
}

// A run removes the spill folders that killed checker processes left
// behind, says so, and leaves alone a live process's folder and anything
// that is not a checker's.
func TestStaleSpillFoldersOfDeadProcessesAreRemoved(t *testing.T) {
	dir := t.TempDir()
	dead := filepath.Join(dir, spillPrefix+strconv.Itoa(deadPID(t))+"-123")
	live := filepath.Join(dir, spillPrefix+strconv.Itoa(os.Getppid())+"-456")
	other := filepath.Join(dir, "checker-spill-notapid-789")
	for _, d := range []string{dead, live, other} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "modelcheck-spill-1"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "modelcheck-spill-1", "run-0"), []byte("fingerprints"), 0o644))
	}
	code, _, errOut := runCLI(t, "check", "--model", "twophase", "--rms", "3", "--spill", dir, "--progress", "0")
	require.Equal(t, exitOK, code, errOut)
	require.NoDirExists(t, dead)
	require.Contains(t, errOut, dead)
	require.Contains(t, errOut, "no longer runs")
	require.DirExists(t, live)
	require.DirExists(t, other)
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, left, 2, "the run's own folder is gone at its end")
}

// spillOwner reads back only the names ownSpillFolder makes.
func TestSpillOwnerNames(t *testing.T) {
	for name, want := range map[string]int{
		"checker-spill-42-123": 42, "checker-spill-42": 0, "checker-spill--1-2": 0,
		"checker-spill-x-2": 0, "modelcheck-spill-42-1": 0, "checker-spill-0-1": 0,
	} {
		pid, ok := spillOwner(name)
		require.Equal(t, want != 0, ok, name)
		require.Equal(t, want, pid, name)
	}
}

// SIGTERM in the middle of a spilled search ends the command through its
// normal return, so the seen-set's files on disk are removed (before,
// only Ctrl-C was caught and a SIGTERM left them).
func TestSpillFolderGoneAfterSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "check", "--model", "twophase", "--rms", "9", "--memory", "24MiB", "--spill", dir, "--progress", "0")
	cmd.Env = append(os.Environ(), "DRAINPROOF_CHECKER_MAIN=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	// Wait until the seen-set has spilled: the search's own folder appears
	// inside the process's.
	spilled := func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, spillPrefix+"*", "modelcheck-spill-*"))
		return len(m) > 0
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !spilled() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !spilled() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the search never spilled; stderr: %s", stderr.String())
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err := cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stderr: %s", stderr.String())
	require.Equal(t, exitIncomplete, exit.ExitCode(), "stderr: %s", stderr.String())
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left, "stderr: %s", stderr.String())
}
