package main

import (
	"path/filepath"
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
