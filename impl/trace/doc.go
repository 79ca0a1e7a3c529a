// Package trace is the implementation's side of trace validation
// (docs/trace.md): the [Tracer] hook through which the library reports
// each step it takes as the TLA+ action of tla/DrainRegistration.tla, and
// [Writer], which writes those steps as NDJSON for `checker trace`
// (harness/tracecheck) and tla/TraceDrainRegistration.tla.
//
// Every component takes a Tracer in its Config, nil by default; an
// untraced component pays one nil check per action site. A component
// calls Trace while it holds the lock, or is inside the serial section,
// that orders the effect the line describes, so that the lines of several
// goroutines are in the order the effects happened, not in timestamp
// order. Writer serialises its calls with one mutex.
//
// # Which Go code emits which action
//
// tla/README.md ("Actions and their Go code") maps every action to the Go
// code that performs it and emits its line; it is the one copy of that
// mapping, and a test (internal/docs) keeps its Go identifiers real. The
// action names are package names' constants: a line's Action is a
// names.Action.
//
// The event service's close and report run on their caller's goroutine:
// their lines are in the order of their effects whatever the number of
// closers and reporters (each effect on the gate flags or a broker's
// admission word is taken with its line under the service's trace lock);
// the model has one sample at a time, so overlapping reports make a trace
// the model does not describe.
//
// Message losses and duplicates are never traced: no process sees them;
// the checker fills them in from the trace's future.
//
// # One trace per process
//
// A run of several processes (a cluster, or the simulator's processes)
// writes one trace per process: a Writer whose Header names the process
// stamps each line with the process and its Lamport clock ([Stamp],
// Line.At), writes the lines it depends on (Line.From, or given by
// [Writer.Receive] before a message is handed over), and writes a line
// that sends a message through before it returns, so that a killed
// process ([Writer.Crash]) loses only lines no other process saw. A
// message carries the stamp of the line that sent it (a Stamp field of
// the transport's message). The checker merges the traces in clock order
// (docs/trace.md, "Multi-process runs", which argues why one such order
// suffices).
package trace
