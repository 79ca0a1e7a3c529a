package bugs

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// The bug names, as the TLA+ set BugNames spells them.
const (
	// CountAfterPublish names the bug whose count rises only at publish.
	CountAfterPublish = "CountAfterPublish"
	// NoAdmissionGate names the bug that admits registrations after close.
	NoAdmissionGate = "NoAdmissionGate"
	// DecrementBeforeCleanup names the bug that decrements before cleanup.
	DecrementBeforeCleanup = "DecrementBeforeCleanup"
	// LeakOnSchemaFailure names the bug that leaks a failed registration.
	LeakOnSchemaFailure = "LeakOnSchemaFailure"
	// DoubleDecrement names the bug whose removers both decrement.
	DoubleDecrement = "DoubleDecrement"
	// DoubleIncrement names the bug that counts a repeated registration twice.
	DoubleIncrement = "DoubleIncrement"
	// IgnoreBrokerCount names the bug whose drain completion ignores the
	// broker count.
	IgnoreBrokerCount = "IgnoreBrokerCount"
	// TrustLivenessResponse names the bug that reads a missing count as 0.
	TrustLivenessResponse = "TrustLivenessResponse"
	// AcceptStaleEpoch names the bug that applies observations of an older
	// epoch.
	AcceptStaleEpoch = "AcceptStaleEpoch"
	// UnknownErasesCount names the bug whose "unknown" LogCoordinator
	// answer replaces the accepted count with 0.
	UnknownErasesCount = "UnknownErasesCount"
	// SampleBeforeClose names the bug whose report sums the brokers'
	// counts before it closes admission.
	SampleBeforeClose = "SampleBeforeClose"
	// ClosedBeforeBrokers names the bug whose close of admission sets the
	// service's closed flag before it closes each broker's gate bit.
	ClosedBeforeBrokers = "ClosedBeforeBrokers"
	// RollbackBeforeUnsubscribe names the bug whose failed registration
	// rolls its count back before it releases its event-store
	// subscription.
	RollbackBeforeUnsubscribe = "RollbackBeforeUnsubscribe"
	// SkipDraining names the bug whose coordinator sends STOPPING without
	// having observed DRAINING and no maintainer work.
	SkipDraining = "SkipDraining"
	// NodeAcceptsSkip names the bug whose node takes any forward liveness
	// step, a skip (ALIVE to STOPPING) included.
	NodeAcceptsSkip = "NodeAcceptsSkip"
	// LegacyOnUnknown names the bug whose coordinator gives the legacy
	// hard-restart answer while a node's version is still unknown.
	LegacyOnUnknown = "LegacyOnUnknown"
	// NoReReport names the bug whose event service reports to the
	// LogCoordinator only when its report changed, so that a cache entry
	// expired by its TTL is never refreshed.
	NoReReport = "NoReReport"
	// LeakBatchOnError names the implementation-only bug whose event store
	// does not close a write batch when the write fails (TiCDC PR #4366's
	// defer batch.Close()); it has no counterpart in the TLA+ model.
	LeakBatchOnError = "LeakBatchOnError"
)

// EnvVar is the environment variable [FromEnv] reads.
const EnvVar = "DRAINPROOF_BUG"

var names = []string{
	IgnoreBrokerCount,
	TrustLivenessResponse,
	AcceptStaleEpoch,
	CountAfterPublish,
	NoAdmissionGate,
	DecrementBeforeCleanup,
	LeakOnSchemaFailure,
	DoubleDecrement,
	DoubleIncrement,
	UnknownErasesCount,
	SampleBeforeClose,
	ClosedBeforeBrokers,
	RollbackBeforeUnsubscribe,
	SkipDraining,
	NodeAcceptsSkip,
	LegacyOnUnknown,
	NoReReport,
	LeakBatchOnError,
}

// modelBugs is how many of names, from the start, are model bugs: the
// elements of the TLA+ set BugNames. The rest are implementation-only.
const modelBugs = 17

// requires maps a model bug to the bugs its TLA+ model switches on with
// it (tla/MCDrainRegistrationBug<name>.cfg's Bugs, but name): the bugs
// without which the run never reaches name's fault.
var requires = map[string][]string{
	// The node accepts a skip only if somebody sends one: the coordinator
	// of SkipDraining.
	NodeAcceptsSkip: {SkipDraining},
}

// Requires returns the bugs that [Enable] switches on with name: those
// its TLA+ model has on beside it (tla/MCDrainRegistrationBug<name>.cfg),
// without which no run reaches name's fault. NodeAcceptsSkip requires
// SkipDraining: a node takes a skip only if a coordinator sends one.
// A check against the model compares with the model that has these bugs
// on ([Reference]), so that what it catches is name's own fault.
func Requires(name string) []string {
	return append([]string(nil), requires[name]...)
}

// ErrNotBuilt is returned by [Enable] in a binary built without the tag
// bugs: the fault points are not compiled in.
var ErrNotBuilt = errors.New("bugs: fault points not built in (build with -tags bugs)")

// ErrUnknown is wrapped by the error [Enable] returns for a name that is
// not one of [Names].
var ErrUnknown = errors.New("bugs: unknown bug")

// Names returns the names of the bugs that can be switched on: the model
// bugs in the order of the TLA+ set BugNames (spec.BugNames; together
// [ModelNames]), then the implementation-only ones ([ImplOnlyNames]).
func Names() []string {
	return append([]string(nil), names...)
}

// EventService returns the names of the bugs whose fault points are in
// package eventservice, in the order of docs/protocol.md §13's bug table
// and then of [Names]; the others are the drain controller's, which only
// a whole cluster (package sim) exercises, and the implementation-only
// ones ([ImplOnlyNames]).
func EventService() []string {
	return []string{CountAfterPublish, NoAdmissionGate, DecrementBeforeCleanup, LeakOnSchemaFailure,
		DoubleDecrement, DoubleIncrement, SampleBeforeClose, ClosedBeforeBrokers, RollbackBeforeUnsubscribe}
}

// ModelNames returns the names of the model bugs: elements of the TLA+
// set BugNames in tla/DrainRegistration.tla (and spec.BugNames), in the
// order of [Names]. Each has a Bugs switch and a .cfg in tla/.
func ModelNames() []string {
	return append([]string(nil), names[:modelBugs]...)
}

// ImplOnlyNames returns the names of the implementation-only bugs: defects
// of code below the model's level of detail (resource handling in the
// event store), caught by the implementation's tests and make bugs, with
// no TLA+ switch. LeakBatchOnError is the one so far.
func ImplOnlyNames() []string {
	return append([]string(nil), names[modelBugs:]...)
}

func index(name string) (int, error) {
	for i, n := range names {
		if n == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%w %q (want one of %s)", ErrUnknown, name, strings.Join(names, ", "))
}

// SetupTest is what a test main calls before its tests: it switches on the
// bug named by DRAINPROOF_BUG (FromEnv), says so on stderr under the name
// pkg, and ends the process with exit code 2 if the name is unknown or the
// binary was built without the bugs tag, so that no suite can pass with a
// bug it did not switch on.
func SetupTest(pkg string) {
	name, err := FromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if name != "" {
		fmt.Fprintf(os.Stderr, "%s tests: bug %s switched on\n", pkg, name)
	}
}

// FromEnv enables the bug named by the environment variable DRAINPROOF_BUG
// and returns its name; it returns "" and nil when the variable is unset or
// empty. Test mains call it before running tests.
func FromEnv() (string, error) {
	name := os.Getenv(EnvVar)
	if name == "" {
		return "", nil
	}
	return name, Enable(name)
}
