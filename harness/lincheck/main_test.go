package lincheck

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/drainproof/drainproof/impl/bugs"
)

// TestMain switches on the bug named by DRAINPROOF_BUG (build tag bugs),
// so that run_bugs.sh can require the linearizability test to fail, and
// checks for leaked goroutines.
func TestMain(m *testing.M) {
	bugs.SetupTest("lincheck")
	goleak.VerifyTestMain(m)
}
