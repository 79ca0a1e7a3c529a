package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// maxWorkers bounds every --workers flag: far more goroutines than any
// machine has cores, far fewer than would exhaust memory.
const maxWorkers = 1024

// intRange returns an error naming flag if v is outside lo..hi.
func intRange(flag string, v, lo, hi int64) error {
	if v < lo || v > hi {
		return fmt.Errorf("--%s must be in %s..%s, got %s", flag, commas(lo), commas(hi), commas(v))
	}
	return nil
}

// notNegative returns an error naming flag if d is negative.
func notNegative(flag string, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("--%s must not be negative, got %v", flag, d)
	}
	return nil
}

// flagErr prints the first of errs as one line under the command's name
// and returns true if there was one.
func flagErr(stderr io.Writer, cmd string, errs ...error) bool {
	for _, err := range errs {
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
			return true
		}
	}
	return false
}

// writable returns an error naming flag if path cannot be written: it is
// checked before a run starts, so that a bad path does not cost the run
// and its verdict. An existing file is opened without truncation; a new
// one is created and removed again.
func writable(flag, path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("--%s %s: not a regular file", flag, path)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("--%s: %w", flag, err)
		}
		return f.Close()
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("--%s: %w", flag, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("--%s: %w", flag, err)
	}
	f.Close()
	return os.Remove(path)
}

// writableDir returns an error naming flag if files cannot be created in
// the folder dir (created if missing, as the run would): like writable,
// it is checked before the run, so that a --checkpoint folder that cannot
// be written fails at once and not at the first checkpoint, after
// --checkpoint-every of search.
func writableDir(flag, dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--%s: %w", flag, err)
	}
	f, err := os.CreateTemp(dir, ".writable-*")
	if err != nil {
		return fmt.Errorf("--%s: %w", flag, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// readable returns an error naming flag if path cannot be opened for
// reading.
func readable(flag, path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("--%s: %w", flag, err)
	}
	return f.Close()
}

// setFlags is the set of flags given on the command line (not those left
// at their defaults).
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// notWith returns an error if any of names was given along with what
// (a flag or mode), which they do not apply to: a flag that would be
// ignored is refused rather than ignored without a word.
func notWith(set map[string]bool, what, why string, names ...string) error {
	var given []string
	for _, n := range names {
		if set[n] {
			given = append(given, "--"+n)
		}
	}
	if len(given) == 0 {
		return nil
	}
	return fmt.Errorf("%s does not apply with %s (%s)", strings.Join(given, ", "), what, why)
}
