package sim_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/drainproof/drainproof/impl/bugs"
)

// TestMain switches on the bug named by DRAINPROOF_BUG (build tag bugs)
// and checks for leaked goroutines (the event service's request loops).
func TestMain(m *testing.M) {
	bugs.SetupTest("sim")
	goleak.VerifyTestMain(m)
}
