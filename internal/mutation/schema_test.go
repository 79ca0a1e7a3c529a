package mutation

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSchemataJudgeAsBuildsOfTheirOwn: every mutant of the schema fixture
// (a named boolean, a for loop's post statement, increments in a case and
// under a label, a type of an imported package under another name, a
// generic function, nested sites, an operand with an effect) gets the
// verdict from the schema's one binary that a build of its own gives; the
// constants' mutants and the string concatenation's (which does not
// build) are left out of the schema, each with its reason, and the rest
// are in it.
func TestSchemataJudgeAsBuildsOfTheirOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the fixture's tests many times")
	}
	const pkg = "internal/mutation/testdata/schema"
	ctx := context.Background()
	// Two mutants hang (Sum's and Tick's counters counting down): a
	// short limit keeps the test's time down, and a hang is TIMED OUT
	// both ways.
	r := Runner{Root: "../..", Pkg: pkg, Dir: t.TempDir(), Timeout: 10 * time.Second, Floor: 5 * time.Second}
	c, err := r.Cover(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Enumerate("../..", pkg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Schematize(ctx, ms, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, out, err := r.BaselineSchema(ctx, s); err != nil {
		t.Fatalf("the schema with no mutant set: %v\n%s", err, out)
	}
	// No line moves: a panic's line, the compiler's errors and coverage
	// name the original's lines.
	files, err := filepath.Glob(filepath.Join(r.Dir, "schema", "*", "*.go"))
	if err != nil || len(files) != 1 {
		t.Fatalf("the schema's files: %v %v, want the one file", files, err)
	}
	orig, err := os.ReadFile(filepath.Join("testdata", "schema", "schema.go"))
	if err != nil {
		t.Fatal(err)
	}
	sch, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if a, b := bytes.Count(orig, []byte("\n")), bytes.Count(sch, []byte("\n")); a != b {
		t.Errorf("the schema's file has %d lines, the original %d", b, a)
	}
	out := map[string]string{
		"schema.go:12:16 ARITHMETIC_BASE":  "a constant expression", // const size = 2 + 1
		"schema.go:15:17 ARITHMETIC_BASE":  "a constant expression", // [size * 2]int
		"schema.go:18:20 ARITHMETIC_BASE":  "a constant expression", // var threshold = 10 - 3
		"schema.go:18:20 INVERT_NEGATIVES": "a constant expression",
		"schema.go:52:42 ARITHMETIC_BASE":  "the compiler refused it", // a - b of strings
	}
	for _, m := range ms {
		key := strings.TrimPrefix(m.String(), pkg+"/")
		why, isOut := s.Out[m]
		_, isIn := s.IDs[m]
		if isIn == isOut {
			t.Errorf("%s: in the schema %v, left out %v (%q)", key, isIn, isOut, why)
		}
		if want, ok := out[key]; ok != isOut || ok && !strings.HasPrefix(why, want) {
			t.Errorf("%s: left out %v (%q), want left out %v (%q)", key, isOut, why, ok, want)
		}
	}
	verdicts := map[string]int{}
	for _, m := range ms {
		got, _, gout, err := r.TestInSchema(ctx, m, c, s, 10, time.Second)
		if err != nil {
			t.Fatalf("%s: %v\n%s", m, err, gout)
		}
		want, wout, err := r.Test(ctx, m)
		if err != nil {
			t.Fatalf("%s: %v\n%s", m, err, wout)
		}
		if got != want {
			t.Errorf("%s: %s with the schema, %s built alone\n%s", m, got, want, gout)
		}
		verdicts[got]++
	}
	// Not all of one kind: the agreement means something.
	if verdicts[Killed] == 0 || verdicts[Lived] == 0 || verdicts[NotViable] == 0 {
		t.Errorf("verdicts %v: want killed, lived and not viable mutants among them", verdicts)
	}
	t.Logf("%d mutants, %d in the schema; verdicts %v", len(ms), len(s.IDs), verdicts)
}
