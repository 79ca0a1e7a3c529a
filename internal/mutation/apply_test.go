package mutation

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestApplyReplacesTheOperator: each mutator writes gremlins' replacement
// of the token at the position, and nothing else changes; a position
// without a token, or with one the mutator does not change, is an error.
func TestApplyReplacesTheOperator(t *testing.T) {
	src := "package p\n\nfunc f(a, b int) int {\n\tif a <= -b && a != b {\n\t\ta++\n\t}\n\treturn a % b\n}\n"
	for _, c := range []struct {
		m    Mutant
		line string // line m.Line after the mutation
	}{
		{Mutant{"p.go", 4, 7, "CONDITIONALS_BOUNDARY"}, "\tif a < -b && a != b {"},
		{Mutant{"p.go", 4, 7, "CONDITIONALS_NEGATION"}, "\tif a > -b && a != b {"},
		{Mutant{"p.go", 4, 10, "INVERT_NEGATIVES"}, "\tif a <= +b && a != b {"},
		{Mutant{"p.go", 4, 10, "ARITHMETIC_BASE"}, "\tif a <= +b && a != b {"},
		{Mutant{"p.go", 4, 18, "CONDITIONALS_NEGATION"}, "\tif a <= -b && a == b {"},
		{Mutant{"p.go", 5, 4, "INCREMENT_DECREMENT"}, "\t\ta--"},
		{Mutant{"p.go", 7, 11, "ARITHMETIC_BASE"}, "\treturn a * b"},
	} {
		out, err := Apply([]byte(src), c.m)
		if err != nil {
			t.Errorf("%s: %v", c.m, err)
			continue
		}
		got, want := strings.Split(string(out), "\n"), strings.Split(src, "\n")
		want[c.m.Line-1] = c.line
		if !slices.Equal(got, want) {
			t.Errorf("%s: got\n%s", c.m, out)
		}
	}
	for _, bad := range []Mutant{
		{"p.go", 4, 8, "CONDITIONALS_BOUNDARY"},  // inside "<="
		{"p.go", 4, 18, "CONDITIONALS_BOUNDARY"}, // != has no boundary
		{"p.go", 40, 1, "ARITHMETIC_BASE"},
		{"p.go", 4, 7, "NO_SUCH_MUTATOR"},
	} {
		if _, err := Apply([]byte(src), bad); err == nil {
			t.Errorf("%s applied", bad)
		}
	}
}

// TestEnumerateIsGremlinsList: the canary's two mutants, at the position
// gremlins reports them, and nothing from its test files.
func TestEnumerateIsGremlinsList(t *testing.T) {
	ms, err := Enumerate("../..", "internal/mutation/testdata/canary")
	if err != nil {
		t.Fatal(err)
	}
	want := []Mutant{
		{"internal/mutation/testdata/canary/canary.go", 9, 40, "CONDITIONALS_BOUNDARY"},
		{"internal/mutation/testdata/canary/canary.go", 9, 40, "CONDITIONALS_NEGATION"},
	}
	if !slices.Equal(ms, want) {
		t.Errorf("got %v, want %v", ms, want)
	}
	if _, err := Enumerate("../..", "no/such/package"); err == nil {
		t.Error("a missing folder was enumerated")
	}
}

// TestDrawIsASeededSubset: the same seed draws the same mutants, another
// seed others; a draw has no repeats; n <= 0 or past the list takes all.
func TestDrawIsASeededSubset(t *testing.T) {
	var ms []Mutant
	for i := 1; i <= 500; i++ {
		ms = append(ms, Mutant{"f.go", i, 1, "ARITHMETIC_BASE"})
	}
	a, b, c := Draw(ms, 60, 7), Draw(ms, 60, 7), Draw(ms, 60, 8)
	if len(a) != 60 || !slices.Equal(a, b) || slices.Equal(a, c) {
		t.Fatalf("draws of 60: seed 7 gives %d then %v, seed 8 the same: %v", len(a), slices.Equal(a, b), slices.Equal(a, c))
	}
	seen := map[Mutant]bool{}
	for _, m := range a {
		if seen[m] || !slices.Contains(ms, m) {
			t.Fatalf("%v drawn twice or not in the list", m)
		}
		seen[m] = true
	}
	for _, n := range []int{0, 500, 501} {
		all := Draw(ms, n, 7)
		slices.SortFunc(all, func(x, y Mutant) int { return x.Line - y.Line })
		if !slices.Equal(all, ms) {
			t.Errorf("n = %d did not take all", n)
		}
	}
}

// TestWilson: the interval of known proportions (the Wilson score
// interval at 95%).
func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{57, 60, 86.3, 98.3},
		{60, 60, 94.0, 100},
		{0, 10, 0, 27.8},
		{0, 0, 0, 100},
	} {
		lo, hi := Wilson(c.k, c.n)
		if lo < c.lo-0.05 || lo > c.lo+0.05 || hi < c.hi-0.05 || hi > c.hi+0.05 {
			t.Errorf("Wilson(%d, %d) = [%.2f, %.2f], want [%.1f, %.1f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

// TestRunnerJudgesTheCanary: through go test -overlay, the canary's test
// kills the negation and lets the boundary mutant live (the verdicts
// gremlins gives), the unmutated tests pass, and a limit too short to run
// them is a timeout, not a kill or a pass.
func TestRunnerJudgesTheCanary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test three times")
	}
	r := Runner{Root: "../..", Pkg: "internal/mutation/testdata/canary", Dir: t.TempDir(), Timeout: 5 * time.Minute}
	ctx := context.Background()
	if _, out, err := r.Baseline(ctx); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := Mutant{"internal/mutation/testdata/canary/canary.go", 9, 40, "CONDITIONALS_BOUNDARY"}
	if st, out, err := r.Test(ctx, m); err != nil || st != Lived {
		t.Errorf("%s: %s %v, want LIVED\n%s", m, st, err, out)
	}
	m.Type = "CONDITIONALS_NEGATION"
	if st, out, err := r.Test(ctx, m); err != nil || st != Killed {
		t.Errorf("%s: %s %v, want KILLED\n%s", m, st, err, out)
	}
	r.Timeout = time.Millisecond
	if st, _, err := r.Test(ctx, m); err != nil || st != TimedOut {
		t.Errorf("%s with a 1 ms limit: %s %v, want TIMED OUT", m, st, err)
	}
}
