//go:build bugs

package bugs

import "sync/atomic"

// Built reports whether the fault points are compiled in (build tag bugs).
const Built = true

var on, reference, reached [19]atomic.Bool

// reach is the function OnReach set, or nil.
var reach atomic.Pointer[func(name string)]

// hit is the fault point of bug i: whether it is on, and if so the
// record that its code ran (Reached), reported once to the OnReach
// function.
func hit(i int) bool {
	if !on[i].Load() {
		return false
	}
	if !reached[i].Swap(true) {
		if f := reach.Load(); f != nil {
			(*f)(all[i])
		}
	}
	return true
}

// OnReach makes f be called, once per bug, the first time the fault
// point of a bug switched on is consulted: the code that holds the bug
// ran. drainproofd logs it, so that a cluster run can tell a bug it did
// not catch from one whose code it never reached. Nil stops the calls.
func OnReach(f func(name string)) {
	if f == nil {
		reach.Store(nil)
		return
	}
	reach.Store(&f)
}

// Reached returns the names of the bugs switched on whose fault point
// has been consulted since the start (or the last Reset).
func Reached() []string {
	var out []string
	for i, n := range all {
		if reached[i].Load() {
			out = append(out, n)
		}
	}
	return out
}

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
		reached[i].Store(false)
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
func CountAfterPublishOn() bool { return hit(3) }

// NoAdmissionGateOn is the fault point of NoAdmissionGate.
func NoAdmissionGateOn() bool { return hit(4) }

// DecrementBeforeCleanupOn is the fault point of DecrementBeforeCleanup.
func DecrementBeforeCleanupOn() bool { return hit(5) }

// LeakOnSchemaFailureOn is the fault point of LeakOnSchemaFailure.
func LeakOnSchemaFailureOn() bool { return hit(6) }

// DoubleDecrementOn is the fault point of DoubleDecrement.
func DoubleDecrementOn() bool { return hit(7) }

// DoubleIncrementOn is the fault point of DoubleIncrement.
func DoubleIncrementOn() bool { return hit(8) }

// IgnoreBrokerCountOn is the fault point of IgnoreBrokerCount.
func IgnoreBrokerCountOn() bool { return hit(0) }

// TrustLivenessResponseOn is the fault point of TrustLivenessResponse.
func TrustLivenessResponseOn() bool { return hit(1) }

// AcceptStaleEpochOn is the fault point of AcceptStaleEpoch.
func AcceptStaleEpochOn() bool { return hit(2) }

// UnknownErasesCountOn is the fault point of UnknownErasesCount.
func UnknownErasesCountOn() bool { return hit(9) }

// SampleBeforeCloseOn is the fault point of SampleBeforeClose.
func SampleBeforeCloseOn() bool { return hit(10) }

// ClosedBeforeBrokersOn is the fault point of ClosedBeforeBrokers.
func ClosedBeforeBrokersOn() bool { return hit(11) }

// RollbackBeforeUnsubscribeOn is the fault point of RollbackBeforeUnsubscribe.
func RollbackBeforeUnsubscribeOn() bool { return hit(12) }

// SkipDrainingOn is the fault point of SkipDraining.
func SkipDrainingOn() bool { return hit(13) }

// NodeAcceptsSkipOn is the fault point of NodeAcceptsSkip.
func NodeAcceptsSkipOn() bool { return hit(14) }

// LegacyOnUnknownOn is the fault point of LegacyOnUnknown.
func LegacyOnUnknownOn() bool { return hit(15) }

// NoReReportOn is the fault point of NoReReport.
func NoReReportOn() bool { return hit(16) }

// LeakBatchOnErrorOn is the fault point of LeakBatchOnError.
func LeakBatchOnErrorOn() bool { return hit(17) }

// RefreshOnOlderReportOn is the fault point of RefreshOnOlderReport.
func RefreshOnOlderReportOn() bool { return hit(18) }
