package tla

import (
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A small module: definitions with their comments, operators used
// directly and through others, variables read.
const small = `---- MODULE Small ----
EXTENDS Integers
VARIABLES
    x,      \* a counter
    y, z    \* two more

vars == <<x, y, z>>

\* Busy is a helper.
Busy == y > 0

\* Safe, part 1.
SafeLow ==
    x >= 0

\* Safe: both parts.
\* A second comment line.
Safe == SafeLow /\ ~Busy

Other == z = 1
====
`

func TestPropertyOfSmallModule(t *testing.T) {
	m := parse(small)
	if !slices.Equal(m.vars, []string{"x", "y", "z"}) {
		t.Fatalf("variables %v", m.vars)
	}
	defs, reads, ok := m.property("Safe")
	if !ok {
		t.Fatal("Safe not found")
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	if want := []string{"Safe", "Busy", "SafeLow"}; !slices.Equal(names, want) {
		t.Errorf("definitions %v, want %v (the property first, then the module's order)", names, want)
	}
	if want := "\\* Safe: both parts.\n\\* A second comment line.\nSafe == SafeLow /\\ ~Busy"; defs[0].Text != want {
		t.Errorf("text %q, want %q", defs[0].Text, want)
	}
	if want := "\\* Safe, part 1.\nSafeLow ==\n    x >= 0"; defs[2].Text != want {
		t.Errorf("text %q, want %q", defs[2].Text, want)
	}
	if !slices.Equal(reads, []string{"x", "y"}) {
		t.Errorf("Safe reads %v, want [x y] (y through Busy; not z)", reads)
	}
	if _, _, ok := m.property("Nope"); ok {
		t.Error("an unknown name is found")
	}
}

// The embedded module: its properties are found and read its variables.
func TestPropertyOfModule(t *testing.T) {
	if len(parsed.vars) < 10 {
		t.Fatalf("%d variables parsed from DrainRegistration.tla: %v", len(parsed.vars), parsed.vars)
	}
	for _, name := range []string{"DrainSafety", "CountAccuracy", "NoHiddenRegistration", "DrainCompletes"} {
		defs, reads, ok := Property(name)
		if !ok {
			t.Errorf("%s not found", name)
			continue
		}
		if !strings.Contains(defs[0].Text, name+" ==") || len(reads) == 0 {
			t.Errorf("%s: definition %q, reads %v", name, defs[0].Text, reads)
		}
		for _, v := range reads {
			if !slices.Contains(parsed.vars, v) {
				t.Errorf("%s reads %s, not a variable", name, v)
			}
		}
	}
	_, reads, _ := Property("DrainSafety")
	if !slices.Contains(reads, "drainedEpoch") || !slices.Contains(reads, "epoch") {
		t.Errorf("DrainSafety reads %v", reads)
	}
}
