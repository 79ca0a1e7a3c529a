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
	// IgnoreBrokerCount
	// TrustLivenessResponse
	// AcceptStaleEpoch
	// CountAfterPublish
	// NoAdmissionGate
	// DecrementBeforeCleanup
	// LeakOnSchemaFailure
	// DoubleDecrement
	// DoubleIncrement
	// UnknownErasesCount
	// SampleBeforeClose
	// ClosedBeforeBrokers
	// RollbackBeforeUnsubscribe
	// SkipDraining
	// NodeAcceptsSkip
	// LegacyOnUnknown
	// NoReReport
	// LeakBatchOnError
	// RefreshOnOlderReport
}
