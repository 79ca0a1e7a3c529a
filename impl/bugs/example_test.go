package bugs_test

import (
	"fmt"

	"github.com/drainproof/drainproof/impl/bugs"
)

// Names lists the bugs that a binary built with -tags bugs can switch on.
func ExampleNames() {
	for _, name := range bugs.Names() {
		fmt.Println(name)
	}
	// Output:
	// CountAfterPublish
	// NoAdmissionGate
	// DecrementBeforeCleanup
	// LeakOnSchemaFailure
	// DoubleDecrement
	// DoubleIncrement
	// IgnoreBrokerCount
	// TrustLivenessResponse
	// AcceptStaleEpoch
	// UnknownErasesCount
	// SampleBeforeClose
	// ClosedBeforeBrokers
	// RollbackBeforeUnsubscribe
	// SkipDraining
	// NodeAcceptsSkip
	// LegacyOnUnknown
	// NoReReport
}
