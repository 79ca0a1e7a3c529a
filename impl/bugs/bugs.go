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
)

// EnvVar is the environment variable [FromEnv] reads.
const EnvVar = "DRAINPROOF_BUG"

var names = []string{
	CountAfterPublish,
	NoAdmissionGate,
	DecrementBeforeCleanup,
	LeakOnSchemaFailure,
	DoubleDecrement,
	DoubleIncrement,
	IgnoreBrokerCount,
	TrustLivenessResponse,
	AcceptStaleEpoch,
	UnknownErasesCount,
	SampleBeforeClose,
	ClosedBeforeBrokers,
	RollbackBeforeUnsubscribe,
	SkipDraining,
	NodeAcceptsSkip,
	LegacyOnUnknown,
	NoReReport,
}

// ErrNotBuilt is returned by [Enable] in a binary built without the tag
// bugs: the fault points are not compiled in.
var ErrNotBuilt = errors.New("bugs: fault points not built in (build with -tags bugs)")

// ErrUnknown is wrapped by the error [Enable] returns for a name that is
// not one of [Names].
var ErrUnknown = errors.New("bugs: unknown bug")

// Names returns the names of the bugs that can be switched on: the event
// service's, in the order of docs/protocol.md §13's bug table, then the drain
// controller's (packages node, coordinator, logcoord), then those of the
// model at the implementation's granularity, in the order the TLA+ set
// BugNames appends them.
func Names() []string {
	return append([]string(nil), names...)
}

// EventService returns the names of the bugs whose fault points are in
// package eventservice: the first six of [Names], then SampleBeforeClose,
// ClosedBeforeBrokers and RollbackBeforeUnsubscribe; the others are the
// drain controller's, which only a whole cluster (package sim) exercises.
func EventService() []string {
	out := append([]string(nil), names[:6]...)
	return append(out, SampleBeforeClose, ClosedBeforeBrokers, RollbackBeforeUnsubscribe)
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
