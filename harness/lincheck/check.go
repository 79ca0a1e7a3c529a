package lincheck

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"slices"
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
	// it for a NotLinearizable outcome (for the first partition that
	// fails only), Visualize for the others (the whole history).
	Info porcupine.LinearizationInfo
	// Illegal is the first operation no linearization can take, for a
	// NotLinearizable outcome.
	Illegal *Illegal

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
		res.findIllegal(ops, timeout)
	}
	res.Duration = time.Since(start)
	return res
}

// Illegal is where an illegal history goes wrong: the longest sequence of
// steps that explains the failing partition leaves the model in Expected,
// from which the step of client operation Op cannot be taken.
type Illegal struct {
	// Partition is the index of the first partition that fails.
	Partition int `json:"partition"`
	// Client is the operation's client.
	Client int `json:"client"`
	// Op renders the client operation and what it returned, as the
	// visualization does, e.g. "Report() → (0, closed=true)".
	Op string `json:"op"`
	// Step is the step of the operation that cannot be taken.
	Step string `json:"step"`
	// Call and Return are the operation's logical times.
	Call   int64 `json:"call"`
	Return int64 `json:"return"`
	// Linearized is how many steps of the partition were explained.
	Linearized int `json:"linearized"`
	// Expected is the model's state after them (State.String).
	Expected string `json:"expected"`
}

// String renders i on one line.
func (i *Illegal) String() string {
	return fmt.Sprintf("client %d: %s (step %s, call %d, return %d) after %d steps; the model expected state %s",
		i.Client, i.Op, i.Step, i.Call, i.Return, i.Linearized, i.Expected)
}

// findIllegal fills r.Illegal and r.Info from the first partition of ops
// that fails: its longest partial linearization, replayed, is the state
// the model expected, and of the steps it leaves out the one that must
// come first (the earliest return) is the illegal one. The visualization
// then shows that partition only.
func (r *Result) findIllegal(ops []porcupine.Operation, timeout time.Duration) {
	single := Model
	single.Partition = nil
	for p, part := range Partition(ops) {
		if porcupine.CheckOperationsTimeout(single, part, timeout) != porcupine.Illegal {
			continue
		}
		_, r.Info = porcupine.CheckOperationsVerbose(single, part, timeout)
		r.Info.AddAnnotations(annotations(r.history, part))
		r.explained = true
		var longest []porcupine.Operation
		for _, l := range r.Info.PartialLinearizationsOperations()[0] {
			if len(l) > len(longest) {
				longest = l
			}
		}
		s, in := initState(), map[*Input]bool{}
		for _, op := range longest {
			_, s = step(s, op.Input.(*Input))
			in[op.Input.(*Input)] = true
		}
		var first *porcupine.Operation
		for k := range part {
			op := &part[k]
			if !in[op.Input.(*Input)] && (first == nil || op.Return < first.Return || op.Return == first.Return && op.Call < first.Call) {
				first = op
			}
		}
		if first == nil {
			return
		}
		input := first.Input.(*Input)
		r.Illegal = &Illegal{Partition: p, Client: first.ClientId, Op: describeOp(input.Op), Step: input.Step.String(),
			Call: first.Call, Return: first.Return, Linearized: len(longest), Expected: s.String()}
		return
	}
	r.explain(ops, timeout) // no single partition fails: show them all
}

// explain fills r.Info: porcupine's verbose check collects the partial
// linearizations that the visualization shows.
func (r *Result) explain(ops []porcupine.Operation, timeout time.Duration) {
	_, r.Info = porcupine.CheckOperationsVerbose(Model, ops, timeout)
	r.Info.AddAnnotations(annotations(r.history, ops))
	r.explained = true
}

// annotations marks the injected faults and the admission close on their
// clients' rows, and the audits on a row of their own, for the operations
// of h within the time span of ops.
func annotations(h *History, ops []porcupine.Operation) []porcupine.Annotation {
	var out []porcupine.Annotation
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, op := range ops {
		lo, hi = min(lo, op.Call), max(hi, op.Return)
	}
	for _, op := range h.Ops {
		if op.Call < lo || op.Return > hi {
			continue
		}
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
	var page bytes.Buffer
	if err := porcupine.Visualize(Model, r.Info, &page); err != nil {
		return err
	}
	out := page.Bytes()
	canvas := []byte(`<div id="canvas"></div>`)
	i := bytes.Index(out, canvas)
	if i < 0 {
		return fmt.Errorf("lincheck: porcupine's page has no canvas")
	}
	// The verdict heads the page, in the flow (below porcupine's fixed
	// legend), so that it is on the first screen and in any screenshot;
	// the diagram scrolls in a box of its own that fills the rest of the
	// window. An illegal history's page holds the failing partition
	// only, says which operation fails and what the model expected, and
	// its box (never the window: a page scrolled while it loads renders
	// blank in chromium --headless --screenshot) opens at that operation
	// once porcupine has drawn the diagram.
	verdict := fmt.Sprintf(`<b>Linearizable.</b> Porcupine found a linearization of all %d operations (%d steps, %d partitions): the diagram shows it.`,
		r.Ops, r.Steps, r.Partitions)
	style := "border-left:6px solid #2a7;background:#e3f6ea"
	if r.Outcome == Unknown {
		verdict = `<b>Unknown.</b> The check timed out: nothing is proven; the diagram shows the linearizations found so far.`
		style = "border-left:6px solid #c80;background:#fdf0dc"
	}
	if r.Illegal != nil {
		verdict = fmt.Sprintf(`<b>NOT linearizable.</b> First illegal operation (partition %d, the one shown): <b>client %d: %s</b> (step %s, call %d, return %d).<br>`+
			`After the %d steps before it, the model expected the state <code>%s</code>.`,
			r.Illegal.Partition, r.Illegal.Client, html.EscapeString(r.Illegal.Op), r.Illegal.Step, r.Illegal.Call, r.Illegal.Return,
			r.Illegal.Linearized, html.EscapeString(r.Illegal.Expected))
		style = "border-left:6px solid #d33;background:#fde2e2"
	}
	head := fmt.Sprintf(`<div id="lincheck-verdict" class="lincheck-%s" style="margin:45px 0 6px 0;font-family:system-ui,sans-serif;padding:.5em .8em;%s">%s</div>`+
		`<style>#lincheck-box #canvas{margin-top:0}</style><div id="lincheck-box" style="overflow:auto">`,
		r.Outcome, style, verdict)
	const box = `</div><script>window.addEventListener('load', () => {
  const box = document.getElementById('lincheck-box')
  box.style.height = Math.max(200, window.innerHeight - box.getBoundingClientRect().top - 16) + 'px'
  const pts = [...document.querySelectorAll('line.linearization-invalid.linearization-point')]
    .filter((p) => !p.parentElement.classList.contains('hidden'))
    .sort((a, b) => a.x1.baseVal.value - b.x1.baseVal.value)
  if (pts.length === 0) return
  const p = pts[0].getBoundingClientRect(), b = box.getBoundingClientRect()
  box.scrollLeft += p.left - b.left - b.width / 2
  box.scrollTop += p.top - b.top - b.height / 2
})</script>`
	_, err := w.Write(slices.Concat(out[:i], []byte(head), canvas, []byte(box), out[i+len(canvas):]))
	return err
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
