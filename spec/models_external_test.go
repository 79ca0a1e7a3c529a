package spec_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/drainproof/drainproof/modelcheck/tlacfg"
	"github.com/drainproof/drainproof/spec"
)

// modelsFile is tla/models.json: every cfg with TLC's figures.
type modelsFile struct {
	Models []struct {
		Config   string `json:"config"`
		Module   string `json:"module"`
		Expected string `json:"expected"`
		Violated string `json:"violated"`
		TLC      struct {
			Distinct    int64   `json:"distinct"`
			Generated   int64   `json:"generated"`
			Depth       int     `json:"depth"`
			Seconds     float64 `json:"seconds"`
			TraceLength int     `json:"trace_length"`
		} `json:"tlc"`
		Liveness bool `json:"liveness"`
		Large    bool `json:"large"`
	} `json:"models"`
}

// loadCfg builds the spec model for a TLC cfg file, and the check options
// the cfg asks for (its invariants, action properties and liveness
// properties, and CHECK_DEADLOCK).
func loadCfg(path string) (*spec.Model, modelcheck.Options, error) {
	var opts modelcheck.Options
	cfg, err := tlacfg.ParseFile(path)
	if err != nil {
		return nil, opts, err
	}
	var c spec.Config
	for _, k := range cfg.Constants {
		if err := c.SetConstant(k.Name, k.Value); err != nil {
			return nil, opts, fmt.Errorf("%s:%d: %w", path, k.Line, err)
		}
	}
	m, err := spec.New(c)
	if err != nil {
		return nil, opts, fmt.Errorf("%s: %w", path, err)
	}
	opts.CheckDeadlock = cfg.CheckDeadlock == nil || *cfg.CheckDeadlock
	opts.Invariants = []string{}
	opts.ActionProperties = []string{}
	opts.Liveness = []string{}
	for _, n := range cfg.Invariants {
		opts.Invariants = append(opts.Invariants, n.Name)
	}
	for _, n := range cfg.Properties {
		switch {
		case slices.Contains(m.ActionProperties(), n.Name):
			opts.ActionProperties = append(opts.ActionProperties, n.Name)
		case slices.Contains(m.LivenessProperties(), n.Name):
			opts.Liveness = append(opts.Liveness, n.Name)
		default:
			return nil, opts, fmt.Errorf("%s:%d: unknown property %q", path, n.Line, n.Name)
		}
	}
	return m, opts, nil
}

// TestModelsMatchTLC runs every model of tla/models.json through our
// checker and compares with TLC: the outcome and the violated property
// always; for complete runs the distinct and generated state counts and
// the depth; for safety violations the counterexample's length (TLC's
// counts at a violation depend on its exploration order). The large model
// runs only with DRAINPROOF_LARGE=1.
func TestModelsMatchTLC(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "tla", "models.json"))
	if err != nil {
		t.Fatal(err)
	}
	var mf modelsFile
	if err := json.Unmarshal(b, &mf); err != nil {
		t.Fatal(err)
	}
	if len(mf.Models) == 0 {
		t.Fatal("tla/models.json lists no models")
	}
	goFigures := map[string]map[string]any{}
	if os.Getenv("DRAINPROOF_UPDATE_GO") != "" {
		t.Cleanup(func() { writeGoFigures(t, goFigures) })
	}
	for _, rec := range mf.Models {
		t.Run(rec.Config, func(t *testing.T) {
			if rec.Large && os.Getenv("DRAINPROOF_LARGE") == "" {
				t.Skip("large model: set DRAINPROOF_LARGE=1")
			}
			if rec.Liveness && testing.Short() {
				t.Skip("liveness model skipped in -short mode")
			}
			m, opts, err := loadCfg(filepath.Join("..", "tla", rec.Config))
			if err != nil {
				t.Fatal(err)
			}
			opts.Workers = 2
			opts.Timeout = 10 * time.Minute
			res, err := modelcheck.Check[spec.State](context.Background(), m, opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("go: %s %s distinct=%d generated=%d depth=%d trace=%d in %v; tlc: distinct=%d generated=%d depth=%d trace=%d",
				res.Outcome, res.Violated, res.Distinct, res.Generated, res.Depth, len(res.Trace), res.Elapsed,
				rec.TLC.Distinct, rec.TLC.Generated, rec.TLC.Depth, rec.TLC.TraceLength)
			goFigures[rec.Config] = map[string]any{
				"distinct": res.Distinct, "generated": res.Generated, "depth": res.Depth,
				"trace_length": len(res.Trace), "seconds": res.Elapsed.Seconds(),
			}
			if got := res.Outcome.String(); got != rec.Expected {
				t.Fatalf("outcome %s (%s), TLC: %s (%s)", got, res.Violated, rec.Expected, rec.Violated)
			}
			if res.Outcome == modelcheck.Violated && res.Violated != rec.Violated {
				t.Errorf("violated %s, TLC: %s", res.Violated, rec.Violated)
			}
			switch {
			case res.Outcome == modelcheck.OK:
				if res.Distinct != rec.TLC.Distinct {
					t.Errorf("distinct %d, TLC %d", res.Distinct, rec.TLC.Distinct)
				}
				if res.Generated != rec.TLC.Generated {
					t.Errorf("generated %d, TLC %d", res.Generated, rec.TLC.Generated)
				}
				if res.Depth != rec.TLC.Depth {
					t.Errorf("depth %d, TLC %d", res.Depth, rec.TLC.Depth)
				}
			case res.Kind == "invariant" || res.Kind == "action":
				if len(res.Trace) != rec.TLC.TraceLength {
					t.Errorf("counterexample of %d states, TLC %d", len(res.Trace), rec.TLC.TraceLength)
				}
			}
		})
	}
}

// writeGoFigures records our checker's figures as the "go" entry of each
// model in tla/models.json (run with DRAINPROOF_UPDATE_GO=1).
func writeGoFigures(t *testing.T, figures map[string]map[string]any) {
	path := filepath.Join("..", "tla", "models.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Error(err)
		return
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Error(err)
		return
	}
	models, _ := doc["models"].([]any)
	for _, x := range models {
		rec, _ := x.(map[string]any)
		if f, ok := figures[rec["config"].(string)]; ok {
			rec["go"] = f
		}
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Error(err)
		return
	}
	if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
		t.Error(err)
	}
}
