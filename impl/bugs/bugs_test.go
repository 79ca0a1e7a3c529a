package bugs_test

import (
	"github.com/drainproof/drainproof/tla/names"

	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/drainproof/drainproof/harness/drainmodel"
	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/spec"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestNamesMatchBugTable(t *testing.T) {
	model := []string{"IgnoreBrokerCount", "TrustLivenessResponse", "AcceptStaleEpoch",
		"CountAfterPublish", "NoAdmissionGate", "DecrementBeforeCleanup",
		"LeakOnSchemaFailure", "DoubleDecrement", "DoubleIncrement", "UnknownErasesCount",
		"SampleBeforeClose", "ClosedBeforeBrokers", "RollbackBeforeUnsubscribe", "SkipDraining",
		"NodeAcceptsSkip", "LegacyOnUnknown", "NoReReport"}
	implOnly := []string{"LeakBatchOnError", "RefreshOnOlderReport"}
	if got := bugs.ModelNames(); fmt.Sprint(got) != fmt.Sprint(model) {
		t.Fatalf("ModelNames() = %v, want %v", got, model)
	}
	if got := bugs.ImplOnlyNames(); fmt.Sprint(got) != fmt.Sprint(implOnly) {
		t.Fatalf("ImplOnlyNames() = %v, want %v", got, implOnly)
	}
	got := bugs.Names()
	if want := append(slices.Clone(model), implOnly...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	got[0] = "mutated"
	if bugs.Names()[0] != model[0] {
		t.Fatal("Names returned its internal slice")
	}
}

// TestModelNamesAreTheTLABugNames: the implementation's model bugs are
// exactly the elements of the TLA+ set BugNames (spec.BugNames), in its
// order, and no implementation-only bug is one of them.
func TestModelNamesAreTheTLABugNames(t *testing.T) {
	if got, want := bugs.ModelNames(), spec.BugNames(); !slices.Equal(got, want) {
		t.Errorf("ModelNames() = %v\nspec.BugNames() = %v", got, want)
	}
	for _, n := range bugs.ImplOnlyNames() {
		if _, err := spec.ParseBug(n); err == nil {
			t.Errorf("implementation-only bug %s is a model bug too", n)
		}
	}
}

func TestEnable(t *testing.T) {
	if err := bugs.Enable("NoSuchBug"); !errors.Is(err, bugs.ErrUnknown) {
		t.Fatalf("Enable(unknown) = %v, want ErrUnknown", err)
	}
	if os.Getenv(bugs.EnvVar) != "" {
		t.Skip("a bug is selected from the environment; leave the switches alone")
	}
	defer bugs.Reset()
	err := bugs.Enable(names.BugDoubleIncrement)
	if !bugs.Built {
		if !errors.Is(err, bugs.ErrNotBuilt) {
			t.Fatalf("Enable without the tag = %v, want ErrNotBuilt", err)
		}
		if bugs.DoubleIncrementOn() {
			t.Fatal("fault point on in the normal build")
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bugs.DoubleIncrementOn() || bugs.DoubleDecrementOn() {
		t.Fatalf("switches wrong after Enable(DoubleIncrement): %v", bugs.Enabled())
	}
	bugs.Reset()
	if len(bugs.Enabled()) != 0 {
		t.Fatalf("Enabled after Reset = %v", bugs.Enabled())
	}
}

// TestEveryNameHasAFaultPoint: each name switches on its own fault point
// and those of the bugs it requires, and no other (a switch array too
// short, or two names on one index, would fail here); Reference lists
// the required ones.
func TestEveryNameHasAFaultPoint(t *testing.T) {
	if !bugs.Built {
		t.Skip("fault points compiled out")
	}
	if os.Getenv(bugs.EnvVar) != "" {
		t.Skip("a bug is selected from the environment; leave the switches alone")
	}
	defer bugs.Reset()
	for _, name := range bugs.Names() {
		bugs.Reset()
		if err := bugs.Enable(name); err != nil {
			t.Fatal(err)
		}
		want := append(bugs.Requires(name), name)
		if got := bugs.Enabled(); len(got) != len(want) || !slices.Contains(got, name) {
			t.Fatalf("Enable(%s): Enabled() = %v, want %v", name, got, want)
		}
		if got := bugs.Reference(); !slices.Equal(got, bugs.Requires(name)) {
			t.Fatalf("Enable(%s): Reference() = %v, want %v", name, got, bugs.Requires(name))
		}
		for other, on := range faultPoints {
			if on() != slices.Contains(want, other) {
				t.Fatalf("Enable(%s): %sOn() = %v", name, other, on())
			}
		}
	}
	if len(faultPoints) != len(bugs.Names()) {
		t.Fatalf("%d fault points for %d names", len(faultPoints), len(bugs.Names()))
	}
}

var faultPoints = map[string]func() bool{
	names.BugCountAfterPublish:         bugs.CountAfterPublishOn,
	names.BugNoAdmissionGate:           bugs.NoAdmissionGateOn,
	names.BugDecrementBeforeCleanup:    bugs.DecrementBeforeCleanupOn,
	names.BugLeakOnSchemaFailure:       bugs.LeakOnSchemaFailureOn,
	names.BugDoubleDecrement:           bugs.DoubleDecrementOn,
	names.BugDoubleIncrement:           bugs.DoubleIncrementOn,
	names.BugIgnoreBrokerCount:         bugs.IgnoreBrokerCountOn,
	names.BugTrustLivenessResponse:     bugs.TrustLivenessResponseOn,
	names.BugAcceptStaleEpoch:          bugs.AcceptStaleEpochOn,
	names.BugUnknownErasesCount:        bugs.UnknownErasesCountOn,
	names.BugSampleBeforeClose:         bugs.SampleBeforeCloseOn,
	names.BugClosedBeforeBrokers:       bugs.ClosedBeforeBrokersOn,
	names.BugRollbackBeforeUnsubscribe: bugs.RollbackBeforeUnsubscribeOn,
	names.BugSkipDraining:              bugs.SkipDrainingOn,
	names.BugNodeAcceptsSkip:           bugs.NodeAcceptsSkipOn,
	names.BugLegacyOnUnknown:           bugs.LegacyOnUnknownOn,
	names.BugNoReReport:                bugs.NoReReportOn,
	names.BugLeakBatchOnError:          bugs.LeakBatchOnErrorOn,
	names.BugRefreshOnOlderReport:      bugs.RefreshOnOlderReportOn,
}

// TestRequiresIsTheModelsCompanions: a bug requires exactly the other
// bugs its TLA+ model (tla/MCDrainRegistrationBug<name>.cfg) switches on.
func TestRequiresIsTheModelsCompanions(t *testing.T) {
	for _, name := range bugs.ModelNames() {
		m, _, err := drainmodel.LoadSpec(filepath.Join("..", "..", "tla", "MCDrainRegistrationBug"+name+".cfg"), false)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, n := range spec.BugNames() {
			if b, _ := spec.ParseBug(n); m.Config().Bugs&b != 0 && n != name {
				want = append(want, n)
			}
		}
		if got := bugs.Requires(name); !slices.Equal(got, want) {
			t.Errorf("Requires(%s) = %v, the model switches on %v beside it", name, got, want)
		}
	}
}

// TestReached: a fault point consulted with its bug on is reached,
// reported once to OnReach's function; one consulted with its bug off is
// not; Reset forgets. Without the tag nothing is ever reached.
func TestReached(t *testing.T) {
	if os.Getenv(bugs.EnvVar) != "" {
		t.Skip("a bug is selected from the environment; leave the switches alone")
	}
	defer bugs.Reset()
	defer bugs.OnReach(nil)
	var calls []string
	bugs.OnReach(func(name string) { calls = append(calls, name) })
	_ = bugs.Enable(names.BugDoubleIncrement)
	for range 3 {
		bugs.DoubleIncrementOn()
		bugs.DoubleDecrementOn()
	}
	if !bugs.Built {
		if len(bugs.Reached()) != 0 || len(calls) != 0 {
			t.Fatalf("reached without the tag: %v %v", bugs.Reached(), calls)
		}
		return
	}
	if got := bugs.Reached(); !slices.Equal(got, []string{names.BugDoubleIncrement}) {
		t.Fatalf("Reached() = %v", got)
	}
	if !slices.Equal(calls, []string{names.BugDoubleIncrement}) {
		t.Fatalf("OnReach calls %v, want one", calls)
	}
	bugs.Reset()
	if len(bugs.Reached()) != 0 {
		t.Fatalf("Reached after Reset = %v", bugs.Reached())
	}
}
