package mutation

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestSelectionJudgesAsTheWholeSuite: each mutant of the fixture is judged
// by the tests that execute its line (TestSmall for Small, TestBig for
// Big, none for Never, TestSign for a case's expression in Sign, which no
// block holds but Sign's body does), by the whole suite outside every
// function (a package-level initializer), and every verdict is the one the
// whole suite gives.
func TestSelectionJudgesAsTheWholeSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the fixture's tests many times")
	}
	const pkg = "internal/mutation/testdata/selective"
	ctx := context.Background()
	r := Runner{Root: "../..", Pkg: pkg, Dir: t.TempDir(), Timeout: 5 * time.Minute}
	c, err := r.Cover(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tc := range c.Tests {
		names = append(names, tc.Name)
	}
	if want := []string{"TestSmall", "TestBig", "TestSign"}; !slices.Equal(names, want) {
		t.Fatalf("tests %v, want %v", names, want)
	}
	ms, err := Enumerate("../..", pkg)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]string{}
	for _, c2 := range []struct {
		line    int
		judges  int // -1: the whole suite
		covered []string
	}{
		{8, -1, nil}, // var limit = 4 - 1: no block holds an initializer
		{11, 1, []string{"TestSmall"}},
		{14, 1, []string{"TestBig"}},
		{17, 0, nil},                  // Never: no test runs it
		{22, 1, []string{"TestSign"}}, // case x < 0: no block holds a case's expression, Sign's body does
	} {
		for _, m := range ms {
			if m.Line != c2.line {
				continue
			}
			tests, whole, err := c.Covering(m)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tc := range tests {
				got = append(got, tc.Name)
			}
			if !slices.Equal(got, c2.covered) || whole != (c2.judges < 0) {
				t.Errorf("%s: reached by %v (the whole suite: %v), want %v (%v)", m, got, whole, c2.covered, c2.judges < 0)
			}
			sel, n, out, err := r.TestSelected(ctx, m, c, 10, time.Second)
			if err != nil {
				t.Fatalf("%s: %v\n%s", m, err, out)
			}
			all, out, err := r.Test(ctx, m)
			if err != nil {
				t.Fatalf("%s: %v\n%s", m, err, out)
			}
			if sel != all || n != c2.judges {
				t.Errorf("%s: %s by %d tests with selection, %s by the whole suite; want the same verdict, by %d", m, sel, n, all, c2.judges)
			}
			verdicts[m.String()] = sel
		}
	}
	// The fixture's tests kill some of these and let others live, so
	// agreeing verdicts are not all of one kind.
	for m, want := range map[string]string{
		pkg + "/selective.go:8:15 ARITHMETIC_BASE":        Killed, // limit 5: Small(4)
		pkg + "/selective.go:11:35 CONDITIONALS_BOUNDARY": Lived,  // Small(3) is not tried
		pkg + "/selective.go:11:35 CONDITIONALS_NEGATION": Killed,
		pkg + "/selective.go:17:34 ARITHMETIC_BASE":       Lived,
		pkg + "/selective.go:22:9 CONDITIONALS_NEGATION":  Killed,
	} {
		if verdicts[m] != want {
			t.Errorf("%s: %s, want %s", m, verdicts[m], want)
		}
	}
}

// TestOverlayQuotesPathsAsJSON: the -overlay file is JSON go build reads
// back, whatever bytes a path holds (Go's %q writes a control byte as
// \x01, which JSON refuses).
func TestOverlayQuotesPathsAsJSON(t *testing.T) {
	name := filepath.Join(t.TempDir(), "overlay.json")
	repl := map[string]string{"/a/b\x01c.go": "/tmp/d \"e\".go", "/f/é.go": "/g.go"}
	if err := writeOverlay(name, repl); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Replace map[string]string }
	if err := json.Unmarshal(data, &got); err != nil || !maps.Equal(got.Replace, repl) {
		t.Fatalf("%s read back as %v (%v), want %v", data, got.Replace, err, repl)
	}
}
