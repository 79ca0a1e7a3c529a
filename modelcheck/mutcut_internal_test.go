package modelcheck

import (
	"os"
	"testing"
)

// SkipInMutationCut skips the calling test when DRAINPROOF_MUTATION is set:
// the cut of the suite that mutation testing runs per mutant
// (internal/mutation/sample). The tests that call it are the package's
// five longest (about 60 of its 65 s on a loaded 2-core machine): the
// hash's collision counts over two million structured inputs (the
// fingerprint's and the word hash's) and the three searches of spilled
// seen sets (hundreds of thousands of states, two million
// fingerprints). Every other test still runs; docs/perf.md ("Mutation
// testing") shows what the cut lets live that the whole suite kills.
func SkipInMutationCut(t testing.TB) {
	t.Helper()
	if os.Getenv("DRAINPROOF_MUTATION") != "" {
		t.Skip("DRAINPROOF_MUTATION: left out of mutation testing's cut suite")
	}
}
