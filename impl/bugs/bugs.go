package bugs

import (
	"errors"
	"fmt"
	"github.com/drainproof/drainproof/tla/names"
	"os"
	"strings"
)

// EnvVar is the environment variable [FromEnv] reads.
const EnvVar = "DRAINPROOF_BUG"

// all is every bug: the model's, in the order of BugNames, then the
// implementation-only ones (package names holds both lists).
var all = append(names.ModelBugs(), names.ImplOnlyBugs()...)

// modelBugs is how many of all, from the start, are model bugs.
var modelBugs = len(names.ModelBugs())

// requires maps a model bug to the bugs its TLA+ model switches on with
// it (tla/MCDrainRegistrationBug<name>.cfg's Bugs, but name): the bugs
// without which the run never reaches name's fault.
var requires = map[string][]string{
	// The node accepts a skip only if somebody sends one: the coordinator
	// of SkipDraining.
	names.BugNodeAcceptsSkip: {names.BugSkipDraining},
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
	return append([]string(nil), all...)
}

// EventService returns the names of the bugs whose fault points are in
// package eventservice, in the order of docs/protocol.md §13's bug table
// and then of [Names]; the others are the drain controller's, which only
// a whole cluster (package sim) exercises, and the implementation-only
// ones ([ImplOnlyNames]).
func EventService() []string {
	return []string{names.BugCountAfterPublish, names.BugNoAdmissionGate, names.BugDecrementBeforeCleanup, names.BugLeakOnSchemaFailure,
		names.BugDoubleDecrement, names.BugDoubleIncrement, names.BugSampleBeforeClose, names.BugClosedBeforeBrokers, names.BugRollbackBeforeUnsubscribe}
}

// ModelNames returns the names of the model bugs: elements of the TLA+
// set BugNames in tla/DrainRegistration.tla (and spec.BugNames), in the
// order of [Names]. Each has a Bugs switch and a .cfg in tla/.
func ModelNames() []string {
	return append([]string(nil), all[:modelBugs]...)
}

// ImplOnlyNames returns the names of the implementation-only bugs: defects
// of code below the model's level of detail (resource handling in the
// event store), caught by the implementation's tests and make bugs, with
// no TLA+ switch: LeakBatchOnError and RefreshOnOlderReport.
func ImplOnlyNames() []string {
	return append([]string(nil), all[modelBugs:]...)
}

func index(name string) (int, error) {
	for i, n := range all {
		if n == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%w %q (want one of %s)", ErrUnknown, name, strings.Join(all, ", "))
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
