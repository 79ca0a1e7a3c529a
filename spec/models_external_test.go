package spec_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/drainproof/drainproof/internal/drainmodel"
)

// TestModelsMatchTLC runs every model of tla/models.json through our
// checker and compares with TLC (drainmodel.Verify): the outcome and the
// violated property always; for complete runs and liveness violations the
// distinct and generated state counts and the depth; for safety
// violations the counterexample's length and the distinct count of the
// whole state space (TLC -continue). The large model runs only with
// DRAINPROOF_LARGE=1; DRAINPROOF_UPDATE_GO=1 records our figures as each
// model's "go" entry.
func TestModelsMatchTLC(t *testing.T) {
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
			row, err := drainmodel.Verify(context.Background(), filepath.Join("..", "tla", e.Config), *e, 2)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("go: %s %s distinct=%d generated=%d depth=%d trace=%d in %.2fs; tlc: distinct=%d",
				row.Outcome, row.Violated, row.Distinct, row.Generated, row.Depth, row.TraceLength, row.Seconds, row.TLCDistinct)
			if !row.OK {
				t.Errorf("not as recorded: %s", row.Problems)
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
