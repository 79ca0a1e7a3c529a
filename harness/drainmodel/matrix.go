package drainmodel

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/drainproof/drainproof/spec"
)

// safetyProperties are the properties a bug matrix row ranges over: the
// invariants and action properties a cfg may name.
var safetyProperties = []string{
	"TypeOK", "DrainSafety", "CountAccuracy", "NoHiddenRegistration", "FailureLeavesNoTrace",
	"NoStaleObservation", "StopAfterWorkMoved", "VersionSafety", "NoAdmissionAfterClose", "MonotoneLiveness",
}

// recorder is a spec model whose invariants and action properties always
// hold for the checker but remember, by index, every one that failed: a
// complete run over it visits the whole reachable state space (as TLC's
// -continue) and leaves the set of violated properties behind.
type recorder struct {
	*spec.Model
	failedInv atomic.Uint64
	failedAct atomic.Uint64
}

func (r *recorder) Holds(i int, s spec.State) bool {
	if !r.Model.Holds(i, s) {
		r.failedInv.Or(1 << i)
	}
	return true
}

func (r *recorder) ActionHolds(i int, a string, from, to spec.State) bool {
	if !r.Model.ActionHolds(i, a, from, to) {
		r.failedAct.Or(1 << i)
	}
	return true
}

// Violations returns, in safetyProperties order, every invariant and
// action property of the model of cfgPath that fails anywhere in its
// reachable state space, whatever the cfg lists; and, when the cfg names
// a liveness property that fails, that property too. It is one row of the
// bug matrix.
func Violations(ctx context.Context, cfgPath string, workers int) ([]string, error) {
	dm, opts, err := load(cfgPath, true)
	if err != nil {
		return nil, err
	}
	m := dm.Model // the matrix runs the whole space: no reduction applies
	live := opts.Liveness
	r := &recorder{Model: m}
	invs, acts := m.Invariants(), m.ActionProperties()
	opts = modelcheck.Options{Workers: workers, CheckDeadlock: false}
	for _, p := range safetyProperties {
		switch {
		case slices.Contains(invs, p):
			opts.Invariants = append(opts.Invariants, p)
		case slices.Contains(acts, p):
			opts.ActionProperties = append(opts.ActionProperties, p)
		default:
			return nil, fmt.Errorf("drainmodel: the model has no property %s", p)
		}
	}
	res, err := modelcheck.Check(ctx, modelcheck.Model[spec.State](struct {
		modelcheck.Model[spec.State]
		modelcheck.ActionPropertied[spec.State]
	}{r, r}), opts)
	if err != nil {
		return nil, err
	}
	if res.Outcome != modelcheck.OK {
		return nil, fmt.Errorf("drainmodel: %s: the matrix run ended %s", cfgPath, res.Outcome)
	}
	var out []string
	for _, p := range safetyProperties {
		if i := slices.Index(invs, p); i >= 0 && r.failedInv.Load()&(1<<i) != 0 {
			out = append(out, p)
		}
		if i := slices.Index(acts, p); i >= 0 && r.failedAct.Load()&(1<<i) != 0 {
			out = append(out, p)
		}
	}
	if len(live) > 0 {
		lm, lopts, err := Load(cfgPath, true)
		if err != nil {
			return nil, err
		}
		lopts.Workers = workers
		lopts.Invariants, lopts.ActionProperties = []string{}, []string{} // nil would mean all
		lres, err := modelcheck.Check(ctx, lm, lopts)
		if err != nil {
			return nil, err
		}
		if lres.Outcome == modelcheck.Violated && lres.Kind == "liveness" {
			out = append(out, lres.Violated)
		}
	}
	return out, nil
}

// Coverage is modelcheck.Coverage of the model of cfgPath, in the
// order of its actions, every action listed.
func Coverage(ctx context.Context, cfgPath string) ([]modelcheck.ActionCoverage, error) {
	dm, _, err := load(cfgPath, false)
	if err != nil {
		return nil, err
	}
	m := dm.Model
	cov, err := modelcheck.Coverage(ctx, modelcheck.Model[spec.State](m), 0)
	if err != nil {
		return nil, err
	}
	return modelcheck.SortCoverage(cov, m.ActionNames()), nil
}

// IdleActions runs Coverage on every given model and returns the actions
// that change the state in none of them, except the exempt ones.
func IdleActions(ctx context.Context, cfgPaths []string, exempt map[string]string) ([]string, error) {
	reached := map[string]int64{}
	var order []string
	for _, p := range cfgPaths {
		cov, err := Coverage(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, c := range cov {
			if _, ok := reached[c.Action]; !ok {
				order = append(order, c.Action)
			}
			reached[c.Action] += c.Reached
		}
	}
	var idle []string
	for _, a := range order {
		if _, ok := exempt[a]; !ok && reached[a] == 0 {
			idle = append(idle, a)
		}
	}
	return idle, nil
}
