package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// spillPrefix begins the name of each checker process's folder inside
// --spill; the process id follows, so a later run can tell a folder whose
// process still runs from one a SIGKILL left behind.
const spillPrefix = "checker-spill-"

// ownSpillFolder makes this process's folder inside dir (the search's
// seen-set spills below it; the caller removes it at the end, on every
// path main returns through, SIGTERM and Ctrl-C included). It first
// removes the folders of earlier checker processes that no longer run: a
// SIGKILL, or a machine that lost power, leaves its spilled set behind,
// as TLC leaves its states folder, and nothing else would ever reclaim
// that disk. Each removal is reported on stderr. A folder whose process
// is alive, or whose name is not one of ours, is left alone.
func ownSpillFolder(dir string, stderr io.Writer) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		pid, ok := spillOwner(e.Name())
		if !ok || !e.IsDir() || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		stale := filepath.Join(dir, e.Name())
		if err := os.RemoveAll(stale); err != nil {
			return "", fmt.Errorf("removing %s, left by process %d that no longer runs: %w", stale, pid, err)
		}
		fmt.Fprintf(stderr, "checker: removed %s, the spill folder of process %d, which no longer runs\n", stale, pid)
	}
	return os.MkdirTemp(dir, spillPrefix+strconv.Itoa(os.Getpid())+"-")
}

// spillOwner returns the process id in a folder name that ownSpillFolder
// made, and false for any other name.
func spillOwner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, spillPrefix)
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}
