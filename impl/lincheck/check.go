package lincheck

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/anishathalye/porcupine"
)

// Outcome is a check's verdict.
type Outcome string

// The verdicts (porcupine's Ok, Illegal and Unknown).
const (
	// Linearizable: some sequential order of the steps explains the history.
	Linearizable Outcome = "ok"
	// NotLinearizable: no sequential order explains the history.
	NotLinearizable Outcome = "illegal"
	// Unknown: the timeout expired first; nothing is proven.
	Unknown Outcome = "unknown"
)

// Result is the verdict of [Check] and what it looked at.
type Result struct {
	// Outcome is the verdict.
	Outcome Outcome
	// Ops is the number of client operations (audits included).
	Ops int
	// Steps is the number of porcupine operations (steps).
	Steps int
	// Partitions is the number of partitions checked.
	Partitions int
	// Duration is the checking time.
	Duration time.Duration
	// Info is the linearization info for [Result.Visualize]; Check fills
	// it for a NotLinearizable outcome, Visualize for the others.
	Info porcupine.LinearizationInfo

	history   *History
	timeout   time.Duration // Check's
	explained bool          // Info is filled
}

// Check checks h (which must be valid, see [History.Validate]) against
// [Model], with a timeout (0: none). A verdict is a result, not an error.
// For an illegal history it checks again in verbose mode to collect the
// partial linearizations for the visualization.
func Check(h *History, timeout time.Duration) Result {
	ops := h.Operations()
	res := Result{Ops: len(h.Ops), Steps: len(ops), Partitions: countPartitions(ops), history: h, timeout: timeout}
	start := time.Now()
	switch porcupine.CheckOperationsTimeout(Model, ops, timeout) {
	case porcupine.Ok:
		res.Outcome = Linearizable
	case porcupine.Unknown:
		res.Outcome = Unknown
	default:
		res.Outcome = NotLinearizable
		res.explain(ops, timeout)
	}
	res.Duration = time.Since(start)
	return res
}

// explain fills r.Info: porcupine's verbose check collects the partial
// linearizations that the visualization shows.
func (r *Result) explain(ops []porcupine.Operation, timeout time.Duration) {
	_, r.Info = porcupine.CheckOperationsVerbose(Model, ops, timeout)
	r.Info.AddAnnotations(annotations(r.history))
	r.explained = true
}

// annotations marks the injected faults and the admission close on their
// clients' rows, and the audits on a row of their own.
func annotations(h *History) []porcupine.Annotation {
	var out []porcupine.Annotation
	for _, op := range h.Ops {
		switch {
		case op.Fault != NoFault:
			what := "EventStore.RegisterDispatcher refuses"
			if op.Fault == FaultSchema {
				what = "SchemaStore.RegisterTable fails"
			}
			out = append(out, porcupine.Annotation{
				ClientId: op.Client, Start: op.Call, End: op.Return,
				Description: "fault: " + string(op.Fault), Details: what + " for " + op.ID,
				BackgroundColor: "#fde2e2",
			})
		case op.Kind == KindClose:
			out = append(out, porcupine.Annotation{
				Tag: "admission", Start: op.Call, End: op.Return,
				Description: "admission closed", Details: fmt.Sprintf("client %d called CloseAdmission", op.Client),
				BackgroundColor: "#ffe8b0",
			})
		case op.Kind == KindAudit:
			out = append(out, porcupine.Annotation{
				Tag: "audit", Start: op.Call, End: op.Return,
				Description: "audit", Details: describeOp(&op),
				BackgroundColor: "#e2ecfd",
			})
		}
	}
	return out
}

// Visualize writes the interactive HTML page of a result of [Check]: the
// history, client by client, with the linearization porcupine found (or,
// for an illegal history, the longest partial ones).
func (r Result) Visualize(w io.Writer) error {
	if r.history == nil {
		return fmt.Errorf("lincheck: nothing to visualize: not a result of Check")
	}
	if !r.explained {
		r.explain(r.history.Operations(), r.timeout)
	}
	return porcupine.Visualize(Model, r.Info, w)
}

// VisualizeFile writes the HTML page of a result to path (see
// [Result.Visualize]).
func (r Result) VisualizeFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := r.Visualize(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// countPartitions returns len(Partition(ops)) without building them.
func countPartitions(ops []porcupine.Operation) int {
	if len(ops) == 0 {
		return 0
	}
	_, at := cuts(ops)
	return len(at) + 1
}
