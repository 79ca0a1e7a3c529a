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
package trace
