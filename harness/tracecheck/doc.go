// Package tracecheck validates traces of the implementation against the
// protocol model of package spec (tla/DrainRegistration.tla): trace
// validation in the style of etcd-raft's and CCF's, in Go.
//
// A trace is NDJSON (docs/trace.md): a header naming the schema version
// and the model's constants, then one line per model action the
// implementation performed, named as the TLA+ action, with its parameters
// and the values of the model variables the implementation observed after
// it (a partial state). [Check] keeps the set of model states that agree
// with the lines so far, deduplicated by fingerprint; each line must be a
// step of the named action from some candidate whose successor agrees
// with every variable the line observes. The environment's steps that no
// process sees (a lost message, a duplicated one) are filled in from the
// trace's own future, not guessed: a receive keeps a copy on the network
// exactly when a later line receives the same message again first, and a
// sent message nobody receives later is lost at once (see lookahead). The
// outcome is [OK], [Rejected] (the first line no step explains, the
// candidates, and for each the variables that disagree; or a line past
// the header's MaxEpoch or MaxMsgs, which no state of the model has) or
// [Incomplete] (a larger bound would explain the trace, or a run does
// what the model does not cover, a coordinator restarted while its
// decision was outstanding: the reason names it); a malformed trace is an
// [*InputError] with the file and line.
//
// [CheckBytes] works in two passes: it compiles every line (a line equal
// to an earlier one is compiled once: a small model's traces repeat
// their lines) into pointer-free records, which the lookahead, run
// backwards, completes; then the candidate search runs forwards.
//
// The package knows spec's shapes in one file (table.go): the observable
// variables, the parameters of the actions, the environment's actions.
// The actions themselves are bound by name from spec.ActionNames.
// A full run's trace (header mapping "sessions") is validated through a
// refinement mapping (refine.go; docs/trace.md, "Every run"): the
// maintainers' units of work abstracted to the model's one, reports and
// a stale LogCoordinator's unknown answers that change nothing as stutter
// steps, and CoordRejoin, a step that is not the model's, starting a new
// drain session.
// [Generate] writes traces of random walks of the model, for tests,
// benchmarks and the TLC parity corpus (tla/TraceDrainRegistration.tla);
// [GenerateWithout] guides a walk by leaving actions out (without
// NodeCrashRestart, T's drain completes and T is upgraded), and
// [GenerateGuided] leaves them out until an action is taken (crash
// restarts after the upgrade restart: a run crosses both).
package tracecheck
