package modelcheck

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"
)

// Outcome is the verdict of a run.
type Outcome int

// The outcomes of a run.
const (
	// OK means the whole reachable state space was explored and every
	// checked property held.
	OK Outcome = iota
	// Violated means an invariant, action property or liveness property
	// failed; Result.Violated names it and Result.Trace shows how.
	Violated
	// Deadlock means a reachable state has no successor (and deadlock
	// checking was on).
	Deadlock
	// Incomplete means the run stopped early: a state, depth or time
	// limit, or the context was cancelled. The figures are partial.
	Incomplete
)

// String returns the outcome as the CLI's JSON spells it.
func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Violated:
		return "violated"
	case Deadlock:
		return "deadlock"
	case Incomplete:
		return "incomplete"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Options configures a run. The zero value checks every property the model
// defines with one worker per core and no limits.
type Options struct {
	// Workers is the number of goroutines that expand states; 0 means
	// runtime.GOMAXPROCS(0).
	//
	// With one worker the search is single-worker TLC's, step for step:
	// states are expanded in TLC's FIFO order and the run stops at the
	// first problem in that order (an invariant, action property or
	// deadlock, even if a deadlock later in the same level would give a
	// shorter trace), and Distinct, Generated and Depth at a violation
	// are the figures TLC prints. With several workers the reported
	// problem is a shortest one (a deadlock is preferred to a violation
	// one state deeper), and the figures at a violation are the search's
	// progress when it stopped, which depends on the workers' timing.
	//
	// Check does not change GOMAXPROCS. A process that runs fewer workers
	// than GOMAXPROCS gains from lowering it to the worker count for the
	// search, as the checker's CLI does (the worker's goroutine then no
	// longer moves between threads, starting on a cold cache; its figures
	// are in docs/perf.md).
	Workers int
	// MaxStates stops the run (Incomplete) once this many distinct states
	// are known; 0 means no limit.
	MaxStates int64
	// MaxDepth stops the run (Incomplete) when a state at this depth (the
	// initial states are depth 1) would be expanded; 0 means no limit.
	MaxDepth int
	// Timeout stops the run (Incomplete) after this long; 0 means none.
	Timeout time.Duration
	// CheckDeadlock reports a reachable state without successors.
	CheckDeadlock bool
	// Invariants names the invariants to check; nil means all of the
	// model's, an empty non-nil slice none.
	Invariants []string
	// ActionProperties names the action properties to check (models that
	// implement ActionPropertied); nil means all.
	ActionProperties []string
	// Liveness names the liveness properties to check (models that
	// implement Live); nil means all.
	Liveness []string
	// Continue keeps exploring after a violation or deadlock, as TLC's
	// -continue does: the run then covers the whole reachable state space
	// (states that violate an invariant are explored too) and reports the
	// shortest violation it met. Liveness is not checked after a
	// violation.
	Continue bool
	// UseConstraint applies the model's state and action constraints
	// (Constrained, ActionConstrained).
	UseConstraint bool
	// UseView identifies states by the model's view (Viewed).
	UseView bool
	// CheckpointDir, if set, is a folder where the search saves itself at
	// the end of a level, at most every CheckpointEvery (0 means 10
	// minutes), so that a run killed half-way can be resumed with
	// Recover. No checkpoint is written once a problem has been found.
	CheckpointDir   string
	CheckpointEvery time.Duration
	// Recover, if set, is a CheckpointDir to resume from: the run goes on
	// from the saved level and ends with the figures of an uninterrupted
	// run. The model and the options that shape the search (properties,
	// constraints, view, symmetry, fingerprints, depth limit) must be the
	// same; the number of workers may differ.
	Recover string
	// CheckpointID names the model in a checkpoint (the CLI gives the
	// model's name and constants, or the cfg's path), so that a checkpoint
	// of another model with the same first states is refused.
	CheckpointID string
	// MemoryBudget bounds, in bytes, the memory the search holds: the
	// seen-set, the queue of states to expand and, for liveness, the state
	// graph. A run that would pass it stops Incomplete, with its figures,
	// instead of being killed by the kernel; 0 means no budget. The budget
	// is checked after every chunk of states, so it may be passed by one
	// table's growth (a 256th of the seen-set) before the run stops.
	MemoryBudget int64
	// FingerprintBits is 64 (the default, as 0) or 128: the width of the
	// fingerprints that identify states. 128 bits cost about twice the
	// seen-set's memory and a second hash per successor, and make a
	// collision negligible at any size a machine can hold (see
	// Result.Collision).
	FingerprintBits int
	// UseSymmetry identifies states by the model's symmetry (Symmetric).
	// Liveness is not checked under a symmetry or a view (TLC warns that
	// it may miss violations there); asking for both is an error.
	UseSymmetry bool
	// Progress, if set, is called about every ProgressEvery with the
	// figures so far, from a goroutine of the checker.
	Progress func(Progress)
	// ProgressEvery is the interval between Progress calls; 0 means 5s.
	ProgressEvery time.Duration
	// SpillDir, if set, lets the seen-set and the queue move to disk
	// instead of ending the run at MemoryBudget: when the set and the
	// queue pass half the budget at the end of a level, the set's
	// fingerprints go to a sorted file and its log to files; when the
	// queue's blocks in memory pass a quarter of the budget during a
	// level, the workers write the next level's full blocks to files,
	// read back in order when that level is expanded (states of a plain
	// type only: for others the queue stays in memory and ends the run
	// at the budget). Each goes to a folder made inside SpillDir and
	// removed when the run ends; a queue file is removed once read back.
	// A level's own growth of the set may pass the budget before its end.
	// 64-bit fingerprints only: a 128-bit set stops at its budget.
	SpillDir string
	// Lookup chooses how the workers look their successors up in the
	// seen-set (see Lookup); the zero value is LookupAuto.
	Lookup Lookup

	_ struct{}
}

// Lookup is the way the workers look successors up in the seen-set. The
// figures and the counterexamples do not depend on it.
type Lookup int

const (
	// LookupAuto probes as LookupHash while the seen-set is all in
	// memory, and as LookupSorted once part of it is on disk
	// (Options.SpillDir): in memory the two are about as fast, and the
	// hash lookup holds no batch; on disk, sorted batches read the run in
	// ascending order.
	LookupAuto Lookup = iota
	// LookupSorted gathers a worker's successors in large batches, sorts
	// each batch by the slots its fingerprints probe and probes them in
	// that order, so the set's lines (and the run's pages on disk) are
	// read in ascending addresses rather than at random; the batch's new
	// states are then stored and checked in the order they were generated.
	LookupSorted
	// LookupHash probes the set for each successor in the order it was
	// generated, a batch of 128 at a time whose slots are prefetched while
	// the next batch is generated.
	LookupHash
)

// String returns the lookup's name as the CLI spells it.
func (l Lookup) String() string {
	switch l {
	case LookupAuto:
		return "auto"
	case LookupSorted:
		return "sorted"
	case LookupHash:
		return "hash"
	}
	return fmt.Sprintf("Lookup(%d)", int(l))
}

// Progress is a snapshot of a running search, like TLC's progress line.
type Progress struct {
	Elapsed   time.Duration
	Depth     int   // deepest level reached so far
	Distinct  int64 // distinct states found
	Generated int64 // states generated, with multiplicity
	Queue     int64 // states found but not yet expanded
	// StatesPerSecond is distinct states per second since the last report.
	StatesPerSecond float64
	// Phase is "bfs" during the search and "liveness" afterwards.
	Phase string
}

// Step is one state of a counterexample and the action that reached it.
// The first step of a trace is an initial state; its Action is "Init".
type Step[S any] struct {
	Action string // the action's name, as the model's Next emitted it
	Label  string // the action with its arguments (Describer), or Action
	State  S
}

// Result reports a run. Distinct, Generated and Depth count as TLC does:
// Generated includes the initial states and every successor with
// multiplicity (self-loops too), the initial states are depth 1, and Depth
// is the depth of the deepest state stored (at a violation, usually the
// violating state's: TLC stores a new state before it checks it).
type Result[S any] struct {
	Outcome Outcome
	// Violated names the failed property ("deadlock" for Deadlock), and
	// Kind says which sort it is: "invariant", "action", "liveness" or
	// "deadlock". For Incomplete, Reason says which limit stopped the run.
	Violated, Kind, Reason string
	// Trace leads from an initial state to the violation: for an
	// invariant or deadlock, its last state; for an action property, its
	// last step. For a liveness violation, the steps from LoopStart on
	// repeat forever.
	Trace     []Step[S]
	LoopStart int
	// LoopLabel labels the step from the trace's last state back to
	// Trace[LoopStart] (TLC's "Back to state N: <label>"); it is empty
	// when the last state stutters forever (TLC's "Stuttering").
	LoopLabel string
	// LoopAction is the action of that closing step (empty when the last
	// state stutters), for reports that name actions apart from labels.
	LoopAction string
	Distinct   int64
	Generated  int64
	Depth      int
	Elapsed    time.Duration
	Workers    int
	// SetBytes is the memory the seen-set holds (fingerprints and the
	// parent log) at the end of the run.
	SetBytes int64
	// Collision is TLC's optimistic estimate of the probability that a
	// fingerprint collision hid a state, for the fingerprints' width.
	Collision float64
	// FingerprintBits is the fingerprints' width, 64 or 128.
	FingerprintBits int
	// SpillBytes is what the seen-set held on disk at the end of the run
	// (Options.SpillDir), and Spills how many times it was moved there.
	SpillBytes int64
	Spills     int
	// QueueSpillBytes is how many bytes of states the queue (the levels
	// waiting to be expanded) wrote to disk over the run, QueueDiskPeak
	// the most its files held at once, and QueuePeak the most memory its
	// blocks were seen to hold (sampled with the memory budget, so 0
	// without one).
	QueueSpillBytes, QueueDiskPeak, QueuePeak int64
	// ResumedAt is the depth whose states a recovered run (Options.Recover)
	// began with; 0 for a run from the initial states.
	ResumedAt int
}

// StatesPerSecond is distinct states per second of wall time.
func (r *Result[S]) StatesPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Distinct) / r.Elapsed.Seconds()
}

// ErrUnknownProperty is returned by Check when Options names an invariant,
// action property or liveness property the model does not define.
var ErrUnknownProperty = errors.New("modelcheck: unknown property")

// Check explores every state of m reachable from its initial states,
// breadth first, and checks the selected properties. A violation is a
// Result, not an error: the error is only for operational failures (an
// unknown property name, a set overflow). A cancelled ctx or a limit gives
// Outcome Incomplete with the figures reached so far.
//
// Counterexamples for safety properties are shortest. Distinct, Generated,
// Depth and the outcome of a complete run do not depend on Workers, and
// neither does the length of a counterexample.
func Check[S any](ctx context.Context, m Model[S], opts Options) (*Result[S], error) {
	c, err := newChecker(m, opts)
	if err != nil {
		return nil, err
	}
	return c.run(ctx)
}

// pick maps selected names to indices into all, or all indices for nil.
func pick(kind string, all, selected []string) ([]int, error) {
	if selected == nil {
		idx := make([]int, len(all))
		for i := range idx {
			idx[i] = i
		}
		return idx, nil
	}
	idx := make([]int, 0, len(selected))
	for _, name := range selected {
		found := -1
		for i, a := range all {
			if a == name {
				found = i
				break
			}
		}
		if found < 0 {
			return nil, fmt.Errorf("%w: the model has no %s %q", ErrUnknownProperty, kind, name)
		}
		idx = append(idx, found)
	}
	return idx, nil
}

func (o *Options) fill() {
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.FingerprintBits == 0 {
		o.FingerprintBits = 64
	}
	if o.CheckpointEvery <= 0 {
		o.CheckpointEvery = 10 * time.Minute
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 5 * time.Second
	}
}
