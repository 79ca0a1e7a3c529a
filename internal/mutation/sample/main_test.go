package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/drainproof/drainproof/internal/mutation"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestBadInputIsRefused: a bad line range, a file the package does not
// have, a package without mutants, a missing -o, -select with -run or
// -confirm (it chooses the tests itself), or -schema without -select
// exits 2 before any test runs;
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
		{[]string{"-list", "-schema", canary}, 2},
		{[]string{"-list", "-select", "-schema", canary}, 0},
	} {
		if got := run(c.args); got != c.want {
			t.Errorf("sample %v: exit %d, want %d", c.args, got, c.want)
		}
	}
}

// TestResumeRefusesAnotherDraw: -resume goes on only with a result of the
// same draw whose judged mutants are its first ones; a missing file, a
// draw of another seed, or a result that skips the draw's first mutant
// exits 2 before any test runs.
func TestResumeRefusesAnotherDraw(t *testing.T) {
	dir := t.TempDir()
	t.Chdir("../../..")
	const canary = "internal/mutation/testdata/canary"
	ms, err := mutation.Enumerate(".", canary)
	if err != nil {
		t.Fatal(err)
	}
	draw := mutation.Draw(ms, 0, 7)
	saved := func(name string, seed uint64, m mutation.Mutant) string {
		res := result{Population: len(ms), Seed: seed, Sampled: 1, Files: []fileJSON{{FileName: "canary.go",
			Mutations: []mutationJSON{{Type: m.Type, Status: mutation.Killed, Line: m.Line, Column: m.Column}}}}}
		p := filepath.Join(dir, name)
		if err := write(p, res); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"missing", []string{"-resume", "-seed", "7", "-o", filepath.Join(dir, "none.json"), canary}},
		{"another seed", []string{"-resume", "-seed", "7", "-o", saved("seed.json", 8, draw[0]), canary}},
		{"not a prefix", []string{"-resume", "-seed", "7", "-o", saved("skip.json", 7, draw[1]), canary}},
	} {
		if got := run(c.args); got != 2 {
			t.Errorf("%s: sample %v: exit %d, want 2", c.name, c.args, got)
		}
	}
}

// TestResumeJudgesTheRestOfTheDraw: a run resumed from a result that
// judged the draw's first mutant keeps that verdict and judges the rest,
// so the result holds the whole draw, each mutant once.
func TestResumeJudgesTheRestOfTheDraw(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the canary's tests")
	}
	dir := t.TempDir()
	t.Chdir("../../..")
	const canary = "internal/mutation/testdata/canary"
	ms, err := mutation.Enumerate(".", canary)
	if err != nil {
		t.Fatal(err)
	}
	first := mutation.Draw(ms, 0, 7)[0]
	name := filepath.Join(dir, "r.json")
	// A verdict the tests would not give (NOT VIABLE): kept, not judged again.
	res := result{Population: len(ms), Seed: 7, Sampled: 1, Files: []fileJSON{{FileName: "canary.go",
		Mutations: []mutationJSON{{Type: first.Type, Status: mutation.NotViable, Line: first.Line, Column: first.Column}}}}}
	if err := write(name, res); err != nil {
		t.Fatal(err)
	}
	if got := run([]string{"-resume", "-seed", "7", "-o", name, canary}); got != 0 {
		t.Fatalf("sample -resume: exit %d", got)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var got result
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Sampled != len(ms) || len(got.Files) != 1 || len(got.Files[0].Mutations) != len(ms) {
		t.Fatalf("resumed result: %+v, want all %d mutants once", got, len(ms))
	}
	if m := got.Files[0].Mutations[0]; m.Status != mutation.NotViable || m.Line != first.Line || m.Type != first.Type {
		t.Errorf("the first verdict became %+v", m)
	}
}
