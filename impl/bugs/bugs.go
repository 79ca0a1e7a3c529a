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
}

// ErrNotBuilt is returned by [Enable] in a binary built without the tag
// bugs: the fault points are not compiled in.
var ErrNotBuilt = errors.New("bugs: fault points not built in (build with -tags bugs)")

// ErrUnknown is wrapped by the error [Enable] returns for a name that is
// not one of [Names].
var ErrUnknown = errors.New("bugs: unknown bug")

// Names returns the names of the bugs that can be switched on: the event
// service's, in the order of docs/protocol.md §13's bug table, then the drain
// controller's (packages node, coordinator, logcoord).
func Names() []string {
	return append([]string(nil), names...)
}

// EventService returns the names of the bugs whose fault points are in
// package eventservice, the first six of [Names]; the others are the
// drain controller's, which only a whole cluster (package sim) exercises.
func EventService() []string {
	return append([]string(nil), names[:6]...)
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
