package spec_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/drainproof/drainproof/harness/drainmodel"
	"github.com/drainproof/drainproof/spec"
)

// TestModelsMatchTLC runs every model of tla/models.json through our
// checker and compares with TLC (drainmodel.Verify): the outcome and the
// violated property always; for complete runs and liveness violations the
// distinct and generated state counts and the depth; for safety
// violations the counterexample's length and the distinct count of the
// whole state space (TLC -continue). go test keeps to the small models
// (testModelLimit states, fewer under the race detector), so that the
// suite fits a 2-core machine; make check runs every model (checker
// verify), and DRAINPROOF_MODELS=all runs them here too (the large model
// only with DRAINPROOF_LARGE=1 as well). DRAINPROOF_UPDATE_GO=1 records our
// figures as each model's "go" entry.
func TestModelsMatchTLC(t *testing.T) {
	if os.Getenv("DRAINPROOF_MODELS") == "all" && raceEnabled {
		t.Log("every model under the race detector: expect many minutes")
	}
	path := filepath.Join("..", "tla", "models.json")
	man, err := drainmodel.ReadManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	update := os.Getenv("DRAINPROOF_UPDATE_GO") != ""
	for i := range man.Models {
		e := &man.Models[i]
		t.Run(e.Config, func(t *testing.T) {
			if e.Large && os.Getenv("DRAINPROOF_LARGE") == "" {
				t.Skip("large model: set DRAINPROOF_LARGE=1")
			}
			if e.Liveness && testing.Short() {
				t.Skip("liveness model skipped in -short mode")
			}
			if limit := testModelLimit(); os.Getenv("DRAINPROOF_MODELS") != "all" && max(e.TLC.Distinct, e.TLC.ContinueDistinct) > limit {
				t.Skipf("over %d states: left to make check (checker verify runs every model); DRAINPROOF_MODELS=all runs it here", limit)
			}
			row, err := drainmodel.Verify(context.Background(), filepath.Join("..", "tla", e.Config), *e, 2)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("go: %s %s distinct=%d generated=%d depth=%d trace=%d in %.2fs; tlc: distinct=%d",
				row.Outcome, row.Violated, row.Distinct, row.Generated, row.Depth, row.TraceLength, row.Seconds, row.TLCDistinct)
			if !row.OK {
				t.Errorf("not as recorded: %s", row.Problems)
			}
			if update {
				e.Violates = row.Violates
			}
			e.Go = &drainmodel.Figures{Distinct: row.Distinct, Generated: row.Generated, Depth: row.Depth, Seconds: row.Seconds, TraceLength: row.TraceLength, ContinueDistinct: row.ContinueDistinct}
		})
	}
	if update && !t.Failed() {
		if err := man.Write(path); err != nil {
			t.Fatal(err)
		}
	}
}

// DefaultConfig is the default model: the constants of
// tla/MCDrainRegistration.cfg.
func TestDefaultConfigIsTheDefaultCfg(t *testing.T) {
	lm, _, err := drainmodel.Load(filepath.Join("..", "tla", "MCDrainRegistration.cfg"), false)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := lm.(*spec.Model)
	if !ok {
		t.Fatalf("the default cfg names a reduction: %T", lm)
	}
	d, err := spec.New(spec.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprintf("%+v", m.Config()), fmt.Sprintf("%+v", d.Config()); got != want {
		t.Errorf("tla/MCDrainRegistration.cfg has\n%s\nspec.DefaultConfig() has\n%s", got, want)
	}
}

// The bugs the TLA+ module names (BugNames) are the bugs of package spec.
func TestBugNamesMatchTheModule(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "tla", "DrainRegistration.tla"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)BugNames == \{(.*?)\}`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no BugNames in DrainRegistration.tla")
	}
	var names []string
	for _, q := range regexp.MustCompile(`"(\w+)"`).FindAllSubmatch(m[1], -1) {
		names = append(names, string(q[1]))
	}
	if got, want := strings.Join(spec.BugNames(), " "), strings.Join(names, " "); got != want {
		t.Errorf("spec.BugNames() = %s\nthe module's BugNames = %s", got, want)
	}
}

// testModelLimit is the largest state space (TLC's distinct states, or
// its whole space for a violation) that go test checks: the 27 smaller
// models, every bug model but SampleBeforeClose and the reductions' small
// ones among them; under the race detector the 15 of up to 15,000 (the
// safety bug models and the smallest liveness ones), which keeps the
// package inside its timeout on a 2-core machine.
func testModelLimit() int64 {
	if raceEnabled {
		return 15_000
	}
	return 110_000
}
