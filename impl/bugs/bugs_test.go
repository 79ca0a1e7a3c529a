package bugs_test

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/drainproof/drainproof/impl/bugs"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestNamesMatchBugTable(t *testing.T) {
	want := []string{"CountAfterPublish", "NoAdmissionGate", "DecrementBeforeCleanup",
		"LeakOnSchemaFailure", "DoubleDecrement", "DoubleIncrement",
		"IgnoreBrokerCount", "TrustLivenessResponse", "AcceptStaleEpoch", "UnknownErasesCount"}
	got := bugs.Names()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	got[0] = "mutated"
	if bugs.Names()[0] != want[0] {
		t.Fatal("Names returned its internal slice")
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
	err := bugs.Enable(bugs.DoubleIncrement)
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
