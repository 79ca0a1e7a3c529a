package lincheck

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/drainproof/drainproof/impl/bugs"
)

// TestMain switches on the bug named by DRAINPROOF_BUG (build tag bugs),
// so that run_bugs.sh can require the linearizability test to fail, and
// checks for leaked goroutines.
func TestMain(m *testing.M) {
	if name, err := bugs.FromEnv(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	} else if name != "" {
		fmt.Fprintf(os.Stderr, "lincheck tests: bug %s switched on\n", name)
	}
	goleak.VerifyTestMain(m)
}
