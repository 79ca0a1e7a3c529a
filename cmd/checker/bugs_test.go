package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBugTestPackagesExist: the folders whose tests the bug matrix builds
// exist and hold tests (a re-cut that moved one broke checker bugs with
// "directory not found", which only a -tags bugs run would show).
func TestBugTestPackagesExist(t *testing.T) {
	for name, dir := range bugTestPackages {
		tests, err := filepath.Glob(filepath.Join("..", "..", dir, "*_test.go"))
		if err != nil || len(tests) == 0 {
			t.Errorf("%s: no tests in %s (%v)", name, dir, err)
		}
	}
}

// TestBugsClusterFlags: the real cluster's flags are checked before
// anything runs (any build): one line, exit 2.
func TestBugsClusterFlags(t *testing.T) {
	for args, want := range map[string][]string{
		"--cluster-seeds without --cluster": {"--cluster-seeds", "3"},
		"--cluster-seeds must be in":        {"--cluster", "--cluster-seeds", "0"},
		"--cluster-duration must be":        {"--cluster", "--cluster-duration", "0s"},
	} {
		code, out, errOut := runCLI(t, append([]string{"bugs"}, want...)...)
		if code != exitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, strings.Fields(args)[0]) {
			t.Errorf("bugs %v: exit %d, stdout %q, stderr %q; want exit 2 and one line about %s", want, code, out, errOut, args)
		}
	}
}
