package main

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestBadInputIsRefused: a bad line range, a file the package does not
// have, a package without mutants, a missing -o, or -select with -run or
// -confirm (it chooses the tests itself) exits 2 before any test runs;
// -list of a real selection exits 0.
func TestBadInputIsRefused(t *testing.T) {
	t.Chdir("../../..")
	const canary = "internal/mutation/testdata/canary"
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"-list", "-lines", "9-", canary}, 0},
		{[]string{"-list", "-file", "canary.go", canary}, 0},
		{[]string{"-list", "-mutant", canary + "/canary.go:9:40 CONDITIONALS_NEGATION", canary}, 0},
		{[]string{"-list", "-mutant", canary + "/canary.go:9:41 CONDITIONALS_NEGATION", canary}, 2},
		{[]string{"-list", "-lines", "10-", canary}, 2},
		{[]string{"-list", "-lines", "9-3", canary}, 2},
		{[]string{"-list", "-lines", "x", canary}, 2},
		{[]string{"-list", "-file", "nosuch.go", canary}, 2},
		{[]string{"-list", "no/such/package"}, 2},
		{[]string{canary}, 2},
		{[]string{"-list"}, 2},
		{[]string{"-list", "-select", "-run", "TestX", canary}, 2},
		{[]string{"-list", "-select", "-confirm", "1m", canary}, 2},
		{[]string{"-list", "-select", canary}, 0},
	} {
		if got := run(c.args); got != c.want {
			t.Errorf("sample %v: exit %d, want %d", c.args, got, c.want)
		}
	}
}
