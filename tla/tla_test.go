package tla

import (
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestProperty(t *testing.T) {
	defs, reads, ok := Property("DrainSafety")
	if !ok {
		t.Fatal("DrainSafety not found")
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	if want := []string{"DrainSafety", "DrainSafetyClosed", "DrainSafetyEmpty"}; !slices.Equal(names, want) {
		t.Errorf("definitions %v, want %v", names, want)
	}
	if !strings.Contains(defs[0].Text, "DrainSafety == DrainSafetyClosed /\\ DrainSafetyEmpty") {
		t.Errorf("text %q", defs[0].Text)
	}
	if !strings.HasPrefix(defs[2].Text, `\* D5, part 2`) {
		t.Errorf("the comment above a definition is part of its text: %q", defs[2].Text)
	}
	if want := []string{"epoch", "admissionClosed", "pc", "subscribed", "schemaRef", "drainedEpoch"}; !slices.Equal(reads, want) {
		t.Errorf("DrainSafety reads %v, want %v", reads, want)
	}
	// Through an operator: CountAccuracy reads Registered's and Busy's
	// variables too.
	_, reads, _ = Property("CountAccuracy")
	if !slices.Contains(reads, "count") || !slices.Contains(reads, "pc") {
		t.Errorf("CountAccuracy reads %v", reads)
	}
	if _, _, ok := Property("NoSuchProperty"); ok {
		t.Error("an unknown name is found")
	}
	if len(parsed.vars) != 16 {
		t.Errorf("%d variables parsed, want 16: %v", len(parsed.vars), parsed.vars)
	}
}
