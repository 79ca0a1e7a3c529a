//go:build bugs

package bugs

import "sync/atomic"

// Built reports whether the fault points are compiled in (build tag bugs).
const Built = true

var on, reference [19]atomic.Bool

// Enable switches on the bug called name and the bugs it [Requires]
// (which [Reference] then lists). It is safe to call from any goroutine,
// but tests should call it before they start the code under test.
func Enable(name string) error {
	i, err := index(name)
	if err != nil {
		return err
	}
	for _, r := range requires[name] {
		j, err := index(r)
		if err != nil {
			return err
		}
		on[j].Store(true)
		reference[j].Store(true)
	}
	on[i].Store(true)
	return nil
}

// Reset switches every bug off.
func Reset() {
	for i := range on {
		on[i].Store(false)
		reference[i].Store(false)
	}
}

// Reference returns the bugs switched on only because an enabled bug
// [Requires] them: the Bugs of the model that a check of the
// implementation against the model (a conformance test, a trace's
// header) compares with, so that it catches the enabled bug's own fault
// and not the required ones'. Nil when none.
func Reference() []string {
	var out []string
	for i, n := range all {
		if reference[i].Load() {
			out = append(out, n)
		}
	}
	return out
}

// Enabled returns the names of the bugs switched on.
func Enabled() []string {
	var out []string
	for i, n := range all {
		if on[i].Load() {
			out = append(out, n)
		}
	}
	return out
}

// CountAfterPublishOn is the fault point of CountAfterPublish.
func CountAfterPublishOn() bool { return on[3].Load() }

// NoAdmissionGateOn is the fault point of NoAdmissionGate.
func NoAdmissionGateOn() bool { return on[4].Load() }

// DecrementBeforeCleanupOn is the fault point of DecrementBeforeCleanup.
func DecrementBeforeCleanupOn() bool { return on[5].Load() }

// LeakOnSchemaFailureOn is the fault point of LeakOnSchemaFailure.
func LeakOnSchemaFailureOn() bool { return on[6].Load() }

// DoubleDecrementOn is the fault point of DoubleDecrement.
func DoubleDecrementOn() bool { return on[7].Load() }

// DoubleIncrementOn is the fault point of DoubleIncrement.
func DoubleIncrementOn() bool { return on[8].Load() }

// IgnoreBrokerCountOn is the fault point of IgnoreBrokerCount.
func IgnoreBrokerCountOn() bool { return on[0].Load() }

// TrustLivenessResponseOn is the fault point of TrustLivenessResponse.
func TrustLivenessResponseOn() bool { return on[1].Load() }

// AcceptStaleEpochOn is the fault point of AcceptStaleEpoch.
func AcceptStaleEpochOn() bool { return on[2].Load() }

// UnknownErasesCountOn is the fault point of UnknownErasesCount.
func UnknownErasesCountOn() bool { return on[9].Load() }

// SampleBeforeCloseOn is the fault point of SampleBeforeClose.
func SampleBeforeCloseOn() bool { return on[10].Load() }

// ClosedBeforeBrokersOn is the fault point of ClosedBeforeBrokers.
func ClosedBeforeBrokersOn() bool { return on[11].Load() }

// RollbackBeforeUnsubscribeOn is the fault point of RollbackBeforeUnsubscribe.
func RollbackBeforeUnsubscribeOn() bool { return on[12].Load() }

// SkipDrainingOn is the fault point of SkipDraining.
func SkipDrainingOn() bool { return on[13].Load() }

// NodeAcceptsSkipOn is the fault point of NodeAcceptsSkip.
func NodeAcceptsSkipOn() bool { return on[14].Load() }

// LegacyOnUnknownOn is the fault point of LegacyOnUnknown.
func LegacyOnUnknownOn() bool { return on[15].Load() }

// NoReReportOn is the fault point of NoReReport.
func NoReReportOn() bool { return on[16].Load() }

// LeakBatchOnErrorOn is the fault point of LeakBatchOnError.
func LeakBatchOnErrorOn() bool { return on[17].Load() }

// RefreshOnOlderReportOn is the fault point of RefreshOnOlderReport.
func RefreshOnOlderReportOn() bool { return on[18].Load() }
