package mutation

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestEquivalentsStillExist: every mutant equivalent.txt argues about is
// still in the code, at its position.
func TestEquivalentsStillExist(t *testing.T) {
	f, err := os.Open("equivalent.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	eq, err := ParseEquivalents(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eq {
		if why := Stale("../..", e); why != "" {
			t.Errorf("equivalent.txt: %s no longer exists: %s", e.Mutant, why)
		}
	}
}

// TestStaleCatches: an entry whose line moved, whose operator changed or
// whose file went is reported, and one still in place is not.
func TestStaleCatches(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(dir+"/p", 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package p\n\nfunc f(a, b int) bool {\n\treturn a < b\n}\n"
	if err := os.WriteFile(dir+"/p/p.go", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m     Mutant
		stale bool
	}{
		{Mutant{"p/p.go", 4, 11, "CONDITIONALS_BOUNDARY"}, false},
		{Mutant{"p/p.go", 4, 11, "CONDITIONALS_NEGATION"}, false},
		{Mutant{"p/p.go", 4, 11, "ARITHMETIC_BASE"}, true},
		{Mutant{"p/p.go", 3, 11, "CONDITIONALS_BOUNDARY"}, true},
		{Mutant{"p/p.go", 40, 1, "CONDITIONALS_BOUNDARY"}, true},
		{Mutant{"p/gone.go", 4, 11, "CONDITIONALS_BOUNDARY"}, true},
		{Mutant{"p/p.go", 4, 11, "NO_SUCH_MUTATOR"}, true},
	} {
		if got := Stale(dir, Equivalent{Mutant: c.m, Why: "x"}) != ""; got != c.stale {
			t.Errorf("%s: stale %v, want %v", c.m, got, c.stale)
		}
	}
}

// TestStaleMatchesTheLinesCode: an entry that names its line's code is
// stale when the line at its position is another, even one with the same
// operator at the same column, and the report names where the code went.
func TestStaleMatchesTheLinesCode(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(dir+"/p", 0o755); err != nil {
		t.Fatal(err)
	}
	// Line 4 moved to line 5 when a line was added above it; the new line
	// 4 has a < at the same column.
	src := "package p\n\nfunc f(a, b int) bool {\n\tyes := a < b\n\treturn a < b && yes\n}\n"
	if err := os.WriteFile(dir+"/p/p.go", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	e := Equivalent{Mutant: Mutant{"p/p.go", 4, 11, "CONDITIONALS_BOUNDARY"}, Code: "return a < b && yes", Why: "x"}
	if Stale(dir, Equivalent{Mutant: e.Mutant, Why: e.Why}) != "" {
		t.Fatal("without its code the entry is not stale: the operator is at the position")
	}
	why := Stale(dir, e)
	if !strings.Contains(why, "moved to line 5") {
		t.Errorf("stale %q, want it to name line 5, where the code went", why)
	}
	e.Line = 5
	if why := Stale(dir, e); why != "" {
		t.Errorf("the entry at the code's line is stale: %s", why)
	}
	e.Code = "return a <= b && yes"
	if why := Stale(dir, e); !strings.Contains(why, "no line of the file") {
		t.Errorf("code found nowhere: stale %q, want it said", why)
	}
}

// TestJudge: a lived mutant the list argues is set aside, the others are
// survivors, and efficacy counts timeouts as kills.
func TestJudge(t *testing.T) {
	res, err := ReadResult("impl/x", strings.NewReader(`{"files":[{"file_name":"x.go","mutations":[
		{"type":"CONDITIONALS_BOUNDARY","status":"KILLED","line":1,"column":1},
		{"type":"CONDITIONALS_BOUNDARY","status":"TIMED OUT","line":2,"column":1},
		{"type":"CONDITIONALS_BOUNDARY","status":"LIVED","line":3,"column":1},
		{"type":"CONDITIONALS_NEGATION","status":"LIVED","line":4,"column":1},
		{"type":"ARITHMETIC_BASE","status":"NOT COVERED","line":5,"column":1}]}],"elapsed_time":3}`))
	if err != nil {
		t.Fatal(err)
	}
	eq := []Equivalent{{Mutant: Mutant{"impl/x/x.go", 3, 1, "CONDITIONALS_BOUNDARY"}, Why: "equal values are never compared"}}
	j := Judge(res, eq)
	if len(j.Equivalent) != 1 || len(j.Survivors) != 1 || j.Survivors[0].Line != 4 || len(j.Uncovered) != 1 {
		t.Fatalf("judged %+v", j)
	}
	if e := j.Efficacy(); e < 66.6 || e > 66.7 {
		t.Errorf("efficacy %.2f, want 66.67 (2 killed of 3)", e)
	}
	if _, err := ReadResult("impl/x", strings.NewReader(`{"files":[{"file_name":"x.go","mutations":[{"status":"WEIRD"}]}]}`)); err == nil {
		t.Error("an unknown status was accepted")
	}
}

// TestParseEquivalentsRefusesBadLines: an entry without its argument or
// with a bad position is an error, not a silent skip.
func TestParseEquivalentsRefusesBadLines(t *testing.T) {
	for _, bad := range []string{
		"impl/x/x.go:3:1 CONDITIONALS_BOUNDARY",
		"impl/x/x.go:3:1 CONDITIONALS_BOUNDARY -- ",
		"impl/x/x.go:3 CONDITIONALS_BOUNDARY -- why",
		"impl/x/x.go:a:1 CONDITIONALS_BOUNDARY -- why",
		"impl/x/x.go:3:1 CONDITIONALS_BOUNDARY `a < b -- why",
		"impl/x/x.go:3:1 CONDITIONALS_BOUNDARY `a < b` why",
		"impl/x/x.go:3:1 -- why",
	} {
		if _, err := ParseEquivalents(strings.NewReader(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestParseEquivalentsReadsTheCode: the line's code, between backquotes
// after the mutator, is optional and kept apart from the argument (which
// may hold backquotes and dashes of its own).
func TestParseEquivalentsReadsTheCode(t *testing.T) {
	eq, err := ParseEquivalents(strings.NewReader("# a comment\n\n" +
		"impl/x/x.go:3:1 CONDITIONALS_BOUNDARY `if a < b { // a -- b` -- `a` and `b` -- are equal\n" +
		"impl/x/x.go:4:2 CONDITIONALS_NEGATION -- no code given\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Equivalent{
		{Mutant{"impl/x/x.go", 3, 1, "CONDITIONALS_BOUNDARY"}, "if a < b { // a -- b", "`a` and `b` -- are equal"},
		{Mutant{"impl/x/x.go", 4, 2, "CONDITIONALS_NEGATION"}, "", "no code given"},
	}
	if len(eq) != len(want) {
		t.Fatalf("read %+v, want %+v", eq, want)
	}
	for i := range want {
		if eq[i] != want[i] {
			t.Errorf("entry %d: %+v, want %+v", i, eq[i], want[i])
		}
	}
}

// TestSampleInterval: a result drawn from a larger population carries it
// and gets the Wilson interval of its efficacy; a run of every mutant
// (population equal to the sample, or none) has an exact efficacy.
func TestSampleInterval(t *testing.T) {
	muts := `[{"type":"CONDITIONALS_BOUNDARY","status":"KILLED","line":1,"column":1},
		{"type":"CONDITIONALS_BOUNDARY","status":"KILLED","line":2,"column":1},
		{"type":"CONDITIONALS_BOUNDARY","status":"NOT VIABLE","line":3,"column":1},
		{"type":"CONDITIONALS_BOUNDARY","status":"LIVED","line":4,"column":1}]`
	for _, c := range []struct {
		pop, sampled int
		sample       bool
	}{{100, 4, true}, {4, 4, false}, {0, 0, false}} {
		res, err := ReadResult("spec", strings.NewReader(fmt.Sprintf(`{"files":[{"file_name":"x.go","mutations":%s}],"population":%d,"sampled":%d}`, muts, c.pop, c.sampled)))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.NotViable) != 1 {
			t.Errorf("not viable: %v", res.NotViable)
		}
		lo, hi, ok := Judge(res, nil).Interval()
		if ok != c.sample {
			t.Errorf("population %d, sampled %d: interval %v, want %v", c.pop, c.sampled, ok, c.sample)
		}
		if wlo, whi := Wilson(2, 3); ok && (lo != wlo || hi != whi) {
			t.Errorf("interval [%.1f, %.1f], want Wilson(2, 3) = [%.1f, %.1f]", lo, hi, wlo, whi)
		}
	}
}
