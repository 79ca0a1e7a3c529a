//go:build !bugs

package bugs

// Built reports whether the fault points are compiled in (build tag bugs).
const Built = false

// Enable returns [ErrNotBuilt] for a known name (the fault points are
// compiled out) and an error wrapping [ErrUnknown] otherwise.
func Enable(name string) error {
	if _, err := index(name); err != nil {
		return err
	}
	return ErrNotBuilt
}

// Reset does nothing: no bug can be on.
func Reset() {}

// Enabled returns nil: no bug can be on.
func Enabled() []string { return nil }

// Reference returns nil: no bug can be on.
func Reference() []string { return nil }

// OnReach does nothing: no fault point is compiled in.
func OnReach(func(name string)) {}

// Reached returns nil: no bug can be on.
func Reached() []string { return nil }

// CountAfterPublishOn is the fault point of CountAfterPublish: false.
func CountAfterPublishOn() bool { return false }

// NoAdmissionGateOn is the fault point of NoAdmissionGate: false.
func NoAdmissionGateOn() bool { return false }

// DecrementBeforeCleanupOn is the fault point of DecrementBeforeCleanup: false.
func DecrementBeforeCleanupOn() bool { return false }

// LeakOnSchemaFailureOn is the fault point of LeakOnSchemaFailure: false.
func LeakOnSchemaFailureOn() bool { return false }

// DoubleDecrementOn is the fault point of DoubleDecrement: false.
func DoubleDecrementOn() bool { return false }

// DoubleIncrementOn is the fault point of DoubleIncrement: false.
func DoubleIncrementOn() bool { return false }

// IgnoreBrokerCountOn is the fault point of IgnoreBrokerCount: false.
func IgnoreBrokerCountOn() bool { return false }

// TrustLivenessResponseOn is the fault point of TrustLivenessResponse: false.
func TrustLivenessResponseOn() bool { return false }

// AcceptStaleEpochOn is the fault point of AcceptStaleEpoch: false.
func AcceptStaleEpochOn() bool { return false }

// UnknownErasesCountOn is the fault point of UnknownErasesCount: false.
func UnknownErasesCountOn() bool { return false }

// SampleBeforeCloseOn is the fault point of SampleBeforeClose: false.
func SampleBeforeCloseOn() bool { return false }

// ClosedBeforeBrokersOn is the fault point of ClosedBeforeBrokers: false.
func ClosedBeforeBrokersOn() bool { return false }

// RollbackBeforeUnsubscribeOn is the fault point of RollbackBeforeUnsubscribe: false.
func RollbackBeforeUnsubscribeOn() bool { return false }

// SkipDrainingOn is the fault point of SkipDraining: false.
func SkipDrainingOn() bool { return false }

// NodeAcceptsSkipOn is the fault point of NodeAcceptsSkip: false.
func NodeAcceptsSkipOn() bool { return false }

// LegacyOnUnknownOn is the fault point of LegacyOnUnknown: false.
func LegacyOnUnknownOn() bool { return false }

// NoReReportOn is the fault point of NoReReport: false.
func NoReReportOn() bool { return false }

// LeakBatchOnErrorOn is the fault point of LeakBatchOnError: false.
func LeakBatchOnErrorOn() bool { return false }

// RefreshOnOlderReportOn is the fault point of RefreshOnOlderReport: false.
func RefreshOnOlderReportOn() bool { return false }
