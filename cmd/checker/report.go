package main

import (
	"encoding/json"
	"fmt"
	"github.com/drainproof/drainproof/harness/cluster"
	"io"

	"github.com/drainproof/drainproof/harness/drainmodel"
	"github.com/drainproof/drainproof/harness/lincheck"
	"github.com/drainproof/drainproof/harness/sim"
	"github.com/drainproof/drainproof/modelcheck"
)

// The outcomes of every subcommand's report.
const (
	outcomeOK         = "ok"         // nothing wrong found (check: the whole space)
	outcomeViolated   = "violated"   // a property is violated: see violated and kind
	outcomeDeadlock   = "deadlock"   // check: a reachable state without successors
	outcomeIncomplete = "incomplete" // a limit, a timeout or Ctrl-C stopped the run: see reason
	outcomeUnexpected = "unexpected" // verify, tlc: some model is not as recorded; bugs: a bug caught by fewer than two techniques; traceparity: a disagreement
	outcomeError      = "error"      // the command failed (exit 2): see error
)

// report is the one JSON object every subcommand prints with --json (see
// docs/checker.md's "JSON output"), errors included (runJSON). The fields up
// to Models mean the same in every subcommand; the others each belong to
// one subcommand.
type report struct {
	// Command is the subcommand: check, verify, tlc, simulate, lincheck,
	// trace, tracegen, traceparity, bugs, models or version.
	Command string `json:"command"`
	// Outcome is ok, violated, deadlock, incomplete, unexpected or error.
	Outcome string `json:"outcome"`
	// Error is the message of a command that failed (outcome error, exit
	// 2), as it printed it on stderr.
	Error string `json:"error,omitempty"`
	// Violated names the violated property (outcome violated).
	Violated string `json:"violated,omitempty"`
	// Kind is the violated property's kind: invariant, action, liveness,
	// linearizability, stream or cluster (a real cluster run's check).
	Kind string `json:"kind,omitempty"`
	// Reason says why a run is incomplete.
	Reason string `json:"reason,omitempty"`
	// Steps is the number of states of the counterexample (0: none).
	Steps int `json:"steps"`
	// Seconds is the run's wall time.
	Seconds float64 `json:"seconds"`
	// Trace is the counterexample (check), one state per step.
	Trace []jsonStep `json:"trace,omitempty"`
	// LoopStart is the index in Trace where a lasso's loop starts.
	LoopStart *int `json:"loop_start,omitempty"`
	// LoopBack is a lasso's closing step, from the last state of Trace
	// back to Trace[LoopStart] (the text's "Back to state N: ...").
	LoopBack *loopStep `json:"loop_back,omitempty"`
	// Summary counts the models of verify and tlc.
	Summary *summary `json:"summary,omitempty"`
	// Models are the rows of verify and tlc.
	Models []modelRow `json:"models,omitempty"`

	Check    *checkReport    `json:"check,omitempty"`
	Simulate *simulateReport `json:"simulate,omitempty"`
	Lincheck *lincheckReport `json:"lincheck,omitempty"`
	// Cluster is a real cluster run's (checker cluster) result when the
	// invocation ran one seed; ClusterRuns has every seed's, in order.
	Cluster     *cluster.Result   `json:"cluster,omitempty"`
	ClusterRuns []*cluster.Result `json:"cluster_runs,omitempty"`
	// Shard is simulate's and cluster's account of the seeds the
	// invocation ran (its --shard), for checker report merge.
	Shard *seedsReport `json:"shard,omitempty"`
	// Merge is checker report merge's.
	Merge *mergeReport `json:"merge,omitempty"`
	// Traces is the trace validation's (checker trace) report.
	Traces *traceOutput `json:"traces,omitempty"`
	// Coverage is check --coverage's: per action, what it generated.
	Coverage *coverageReport `json:"coverage,omitempty"`
	// Bugs is the bug matrix (checker bugs), one row a bug; BugNames the
	// zoo's bugs (checker bugs --list).
	Bugs     []bugRow `json:"bugs,omitempty"`
	BugNames []string `json:"bug_names,omitempty"`
	// Builtin lists the built-in models (checker models).
	Builtin []builtinRow `json:"builtin,omitempty"`
	// Version is the build's (checker version).
	Version *versionReport `json:"version,omitempty"`
	// Tracegen is what checker tracegen wrote.
	Tracegen *tracegenReport `json:"tracegen,omitempty"`
	// Parity is checker traceparity's comparison with TLC.
	Parity *parityOutput `json:"parity,omitempty"`
}

// coverageReport is what check --coverage adds: per action the
// successors it generated, the new states it found and the distinct
// states it leads to, and the actions that never change the state.
type coverageReport struct {
	Actions []modelcheck.ActionCoverage `json:"actions"`
	Idle    []string                    `json:"never_changes_state"`
}

// builtinRow is one built-in model of checker models.
type builtinRow struct {
	Name string `json:"name"`
	Help string `json:"help"`
}

// versionReport is checker version's: Go's build information.
type versionReport struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

// tracegenReport is what checker tracegen wrote.
type tracegenReport struct {
	Dir    string   `json:"dir"`
	Traces int      `json:"traces"`
	Files  []string `json:"files"`
}

// jsonStep is one step of a trace: the action and the state's variables.
type jsonStep struct {
	Action string            `json:"action"`
	Label  string            `json:"label"`
	State  map[string]string `json:"state"`
}

// loopStep is the step that closes a lasso: its action and label (empty
// action and label "Stuttering" when the last state repeats forever) and
// the state it returns to, numbered from 1 as the text numbers states.
type loopStep struct {
	Action  string `json:"action"`
	Label   string `json:"label"`
	ToState int    `json:"to_state"`
}

// loopBack is the closing step of a lasso whose loop starts at index
// loopStart.
func loopBack(loopStart int, action, label string) *loopStep {
	if label == "" {
		return &loopStep{Label: "Stuttering", ToState: loopStart + 1}
	}
	return &loopStep{Action: action, Label: fmt.Sprintf("Back to state %d: %s", loopStart+1, label), ToState: loopStart + 1}
}

// summary counts the models of a verify or tlc run.
type summary struct {
	Models     int `json:"models"`
	AsRecorded int `json:"as_recorded"`
	Unexpected int `json:"unexpected"`
	// NotRun is the number of models an interruption left out.
	NotRun int `json:"not_run"`
}

// modelRow is one model of a verify or tlc run.
type modelRow struct {
	Config      string  `json:"config"`
	Expected    string  `json:"expected"`
	Outcome     string  `json:"outcome"`
	Violated    string  `json:"violated,omitempty"`
	Steps       int     `json:"steps"`
	Distinct    int64   `json:"distinct"`
	TLCDistinct int64   `json:"tlc_distinct"`
	Generated   int64   `json:"generated"`
	Depth       int     `json:"depth"`
	Seconds     float64 `json:"seconds"`
	// ContinueSeconds is checker tlc's -continue pass's time, if it ran.
	ContinueSeconds float64 `json:"continue_seconds,omitempty"`
	AsRecorded      bool    `json:"as_recorded"`
	Problems        string  `json:"problems,omitempty"`
	// OursSeconds, Workers and Speedup are `checker tlc --versus`'s: our
	// checker's time on the model with TLC's worker count, and TLC's
	// seconds over ours.
	OursSeconds float64 `json:"ours_seconds,omitempty"`
	Workers     int     `json:"workers,omitempty"`
	Speedup     float64 `json:"speedup,omitempty"`
}

// properties is what a check run checks.
type properties struct {
	Invariants []string `json:"invariants"`
	Actions    []string `json:"action_properties"`
	Temporal   []string `json:"temporal_properties"`
	Deadlock   bool     `json:"deadlock"`
}

// checkReport is what `checker check` adds.
type checkReport struct {
	Model      string     `json:"model"`
	Mode       string     `json:"mode"` // exhaustive or simulate
	Properties properties `json:"properties"`
	Workers    int        `json:"workers"`
	Generated  int64      `json:"generated"`
	// Exhaustive search.
	Distinct        int64   `json:"distinct,omitempty"`
	Depth           int     `json:"depth,omitempty"`
	StatesPerSecond float64 `json:"states_per_second,omitempty"`
	SetBytes        int64   `json:"set_bytes,omitempty"`
	SpillBytes      int64   `json:"spill_bytes,omitempty"` // the seen-set's bytes on disk (--spill)
	// QueueSpillBytes is what the queue of states to expand wrote to disk
	// over the run (--spill), and QueueDiskPeak the most it held there.
	QueueSpillBytes int64   `json:"queue_spill_bytes,omitempty"`
	QueueDiskPeak   int64   `json:"queue_disk_peak,omitempty"`
	PeakRSS         int64   `json:"peak_rss_bytes,omitempty"`
	Collision       float64 `json:"collision_probability,omitempty"`
	// Random walks (--simulate).
	Seed      uint64 `json:"seed,omitempty"`
	Walks     int64  `json:"walks,omitempty"`
	Walk      *int64 `json:"walk,omitempty"` // the walk that failed
	WalkSteps int64  `json:"walk_steps,omitempty"`
}

// simulateReport is what `checker simulate` adds: the counts summed over
// the seeds run.
type simulateReport struct {
	Seed            uint64 `json:"seed"`
	Seeds           int    `json:"seeds"`
	EventsPerSeed   int    `json:"events_per_seed"`
	Transport       string `json:"transport"`
	Store           string `json:"store"`
	Bug             string `json:"bug,omitempty"`
	DrainsCompleted int    `json:"drains_completed"`
	Restarts        int    `json:"restarts"`
	UpgradeRestarts int    `json:"upgrade_restarts"`
	CrashRestarts   int    `json:"crash_restarts"`
	LegacyRestarts  int    `json:"legacy_restarts"`
	BrokenStreams   int    `json:"broken_streams"`
	Registrations   int    `json:"registrations"`
	MessagesSent    int    `json:"messages_sent"`
	MessagesLost    int    `json:"messages_lost"`
	Duplicated      int    `json:"messages_duplicated"`
	// Delivery is the changefeed's delivery check: events_committed,
	// events_received, events_lost, events_duplicated,
	// events_out_of_order, events_redelivered and first_lost.
	sim.Delivery
	// DrainEvents summarises how many events the completed drains took;
	// OpenDrains counts the drains open when the events ran out, and with
	// --settle SettledDrains and StalledDrains those that completed once
	// the faults stopped (in SettleEvents events) or never did.
	DrainEvents   sim.Summary `json:"drain_events"`
	OpenDrains    int         `json:"open_drains"`
	SettledDrains int         `json:"settled_drains"`
	StalledDrains int         `json:"stalled_drains"`
	SettleEvents  sim.Summary `json:"settle_events"`
}

// lincheckReport is what `checker lincheck` adds.
type lincheckReport struct {
	Clients int   `json:"clients"`
	Seed    int64 `json:"seed"`
	// Ops is the number of client operations (audits included), and
	// PorcupineOps the operations porcupine checks (one per step).
	Ops           int     `json:"ops"`
	PorcupineOps  int     `json:"porcupine_ops"`
	Partitions    int     `json:"partitions"`
	RecordSeconds float64 `json:"record_seconds,omitempty"`
	Bug           string  `json:"bug,omitempty"`
	History       string  `json:"history,omitempty"`
	HTML          string  `json:"html,omitempty"`
	// FirstIllegal is the first operation no linearization explains, with
	// the state the model expected.
	FirstIllegal *lincheck.Illegal `json:"first_illegal,omitempty"`
}

// writeReport prints r as indented JSON.
func writeReport(w io.Writer, r report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// checkOutcome maps a modelcheck outcome and kind to the report's words.
func checkOutcome(o modelcheck.Outcome, kind string) (outcome, reportKind string) {
	switch o {
	case modelcheck.OK:
		return outcomeOK, ""
	case modelcheck.Incomplete:
		return outcomeIncomplete, ""
	case modelcheck.Deadlock:
		return outcomeDeadlock, "deadlock"
	}
	if kind == "" {
		kind = "invariant"
	}
	return outcomeViolated, kind
}

// rowOf turns a verify row into a report row.
func rowOf(r drainmodel.Row) modelRow {
	return modelRow{Config: r.Config, Expected: r.Expected, Outcome: r.Outcome, Violated: r.Violated, Steps: r.TraceLength,
		Distinct: r.Distinct, TLCDistinct: r.TLCDistinct, Generated: r.Generated, Depth: r.Depth, Seconds: r.Seconds,
		AsRecorded: r.OK, Problems: r.Problems}
}

// tableOutcome is the outcome of verify and tlc.
func tableOutcome(s summary) (outcome, reason string) {
	switch {
	case s.Unexpected > 0:
		return outcomeUnexpected, ""
	case s.NotRun > 0:
		return outcomeIncomplete, fmt.Sprintf("interrupted: %d of %d models not run", s.NotRun, s.Models+s.NotRun)
	}
	return outcomeOK, ""
}

// jsonTrace turns a trace into report steps, each state as its variables.
func jsonTrace[S any](m modelcheck.Model[S], trace []modelcheck.Step[S]) []jsonStep {
	vl, hasVars := m.(modelcheck.VarLister[S])
	var out []jsonStep
	for _, st := range trace {
		js := jsonStep{Action: st.Action, Label: st.Label, State: map[string]string{}}
		if hasVars {
			for _, v := range vl.Vars(st.State) {
				js.State[v[0]] = v[1]
			}
		} else {
			js.State["state"] = fmt.Sprintf("%+v", st.State)
		}
		out = append(out, js)
	}
	return out
}
