package modelcheck

// Model is a finite transition system that the checker explores.
//
// S is the state type. It must be a value type whose copies share no
// mutable memory (arrays and plain fields, no maps or slices that a
// successor could alias), so the checker can keep states in queues and
// hand them to several workers at once.
//
// Every method must be deterministic and safe for concurrent use: the
// same state always yields the same successors in the same order, and
// Encode gives equal bytes exactly for equal states. The checker's
// distinct-state counts, and TLC parity, rest on that contract.
//
// A model never imports this package: any type with these methods is a
// Model, so a protocol package can satisfy it structurally.
type Model[S any] interface {
	// Init calls emit once for each initial state, in a fixed order.
	Init(emit func(s S))
	// Next calls emit once for each successor of s, in a fixed order,
	// with the name of the action that produced it (a constant string,
	// such as "NodeSendHeartbeat"; see Describer for a longer label).
	// Self-loops are successors too and must be emitted.
	Next(s S, emit func(action string, next S))
	// Encode appends a canonical encoding of s to dst and returns it.
	// Two states are the same state exactly when their encodings are
	// equal; the checker fingerprints the encoding.
	Encode(dst []byte, s S) []byte
	// Invariants lists the names of the state invariants the model
	// defines; Holds evaluates them by index.
	Invariants() []string
	// Holds reports whether invariant i (an index into Invariants)
	// holds in s.
	Holds(i int, s S) bool
}

// ActionPropertied is implemented by models that define action properties
// ([][P]_vars in TLA+): predicates on a transition, checked on every
// transition the search takes, including those to states already seen.
// As [P]_vars does, a property holds on a step that changes no variable
// (to equal to from): ActionHolds must report true there, and the checker
// does not ask it for a [Plain] model, whose self-loops it recognises by
// their bytes.
type ActionPropertied[S any] interface {
	// ActionProperties lists the names of the action properties.
	ActionProperties() []string
	// ActionHolds reports whether action property i holds on the step
	// from -> to, which action produced.
	ActionHolds(i int, action string, from, to S) bool
}

// PointerChecked is implemented by models that evaluate their invariants
// and action properties on states passed by pointer, a whole selection in
// one call: the search then makes one call per new state and one per
// step, with no copy of the states. Per property and by value, the calls
// of ActionHolds with their copies were a tenth of the protocol model's
// profile (7.9-8.0 s against 7.3-7.4 s with pointers, one property per
// call, on the large model); one call per selection then took another 4%
// off (1 worker 3.30-3.35 s against 3.45-3.78 s; 2 workers 1.84-1.85 s
// against 1.91-1.95 s). The answers must be those of Holds and
// ActionHolds; the methods must neither change the states nor keep the
// pointers or the slices.
type PointerChecked[S any] interface {
	// FailingPtr returns the first of invariants (indexes into
	// Invariants, taken in that order) that fails in *s, or -1.
	FailingPtr(invariants []int, s *S) int
	// FailingStepPtr returns the first of props (indexes into
	// ActionProperties, in that order) that the step *from -> *to, which
	// action produced, breaks, or -1.
	FailingStepPtr(props []int, action string, from, to *S) int
}

// InPlace is implemented by models that can write each successor into
// memory the checker gives, which spares the copies of a state passed by
// value through the calls between the action and the checker (large
// protocol model, 3 runs alternated: one worker 4.71-4.93 s instead of
// 4.97-5.32 s, two 2.82-3.29 s instead of 2.96-3.38 s). The search
// then calls NextInto instead of Next; the other phases (traces, liveness)
// still call Next.
type InPlace[S any] interface {
	// NextInto is Next: for each successor of *s, in Next's order, it
	// writes the successor into *next and calls emit with the action's
	// name. It must not change *s, nor keep s or next; emit reads *next
	// before it returns and may change it.
	NextInto(s, next *S, emit func(action string))
}

// Constrained is implemented by models with a state constraint (TLC's
// CONSTRAINT), applied when Options.UseConstraint is set. As in TLC, a
// successor that fails it is counted as generated, its invariants are
// checked (TLC treats it as unseen) and the action properties are checked
// on the step, but it is neither stored (not counted as distinct) nor
// explored; an initial state that fails it is checked but not stored.
type Constrained[S any] interface {
	// Constraint reports whether s lies inside the model.
	Constraint(s S) bool
}

// ActionConstrained is implemented by models with an action constraint
// (TLC's ACTION_CONSTRAINT), applied when Options.UseConstraint is set: a
// successor whose step fails it is handled as one outside a state
// constraint (see Constrained).
type ActionConstrained[S any] interface {
	// ActionConstraint reports whether the step from -> to, which action
	// produced, lies inside the model.
	ActionConstraint(action string, from, to S) bool
}

// Viewed is implemented by models with a view (TLC's VIEW), applied when
// Options.UseView is set: two states are the same state when their views
// are equal. The first state met with a view is the one explored, as in
// TLC, so the figures of a view that hides behaviour depend on the search
// order; with one worker they are single-worker TLC's.
type Viewed[S any] interface {
	// View appends the encoding of s's view to dst and returns it; equal
	// encodings mean equal views.
	View(dst []byte, s S) []byte
}

// Symmetric is implemented by models with a symmetry (TLC's SYMMETRY),
// applied when Options.UseSymmetry is set: states related by a permutation
// of the symmetry set are the same state. The checker stores the
// fingerprint of Canonical(s) and explores s itself, as TLC does.
type Symmetric[S any] interface {
	// Canonical returns the representative of s's orbit: the same state
	// for every permutation of s, and a permutation of s. A sort of the
	// permuted parts serves where they can be ordered.
	Canonical(s S) S
}

// Describer is implemented by models that can label a step for people:
// the action with its arguments and the message it carries, for example
// "NodeSendHeartbeat  hb{epoch:1 liveness:STOPPING count:0}". It is
// called only when a counterexample is rebuilt, never in the search loop.
type Describer[S any] interface {
	// Describe labels the step from -> to that action produced.
	Describe(action string, from, to S) string
}

// VarLister is implemented by models that can show a state as named
// variables, so a counterexample can print only the variables a step
// changed. The names must be the same, in the same order, for every state.
type VarLister[S any] interface {
	// Vars returns the state's variables as (name, value) pairs.
	Vars(s S) [][2]string
}

// Live is implemented by models with liveness properties, checked under
// the fairness of the model's Spec formula (WF/SF in TLA+).
//
// Every property has the leads-to form P ~> Q ("whenever P holds, Q holds
// then or later"); <>Q is TRUE ~> Q. A behaviour violates it when, after a
// state with P and not Q, it stays forever in states without Q while
// being fair. Behaviours may stutter: a state where no fairness instance
// is enabled may repeat forever.
//
// Fairness comes in instances, each named by a key (for per-message
// fairness the key names the message, e.g. "SF CoordRecvHeartbeat hb{...}").
// A weak instance forbids a behaviour that keeps it enabled forever
// without taking it; a strong one forbids a behaviour that enables it
// infinitely often without taking it.
type Live[S any] interface {
	// LivenessProperties lists the names of the liveness properties.
	LivenessProperties() []string
	// LeadsTo evaluates property i in s: p for its P, q for its Q.
	LeadsTo(i int, s S) (p, q bool)
	// FairEnabled calls emit for every fairness instance enabled in s.
	FairEnabled(s S, emit func(key string, strong bool))
	// FairTaken calls emit for every fairness instance that the step
	// from -> to, produced by action, takes.
	FairTaken(action string, from, to S, emit func(key string))
}

// Plain is implemented by models whose states are plain values: S is made
// of integers, booleans, and arrays and structs of them, with no padding
// and no pointers, and two states are the same state exactly when their
// bytes are equal. The checker then fingerprints a state's bytes in memory
// instead of its Encode encoding (a VIEW still goes through View), which
// spares an encoding per successor, and computes a successor's fingerprint
// from its parent's and the bytes the step changed; it refuses a Plain
// model whose S is not plain. Encode must still give the canonical
// encoding.
type Plain interface {
	// PlainState marks the model; it is never called.
	PlainState()
}
