package eventservice

// This file is the test seam of the event service's interleavings: every
// effect that another goroutine can observe (the effects trace.go writes
// a line for, and the store releases a count must outlast) is preceded by
// a point, at which a test's hook may stop the goroutine and run another
// one's steps first. The tests of this package set the hook
// (granularity_test.go stops one goroutine at one point; explore_test.go
// runs a controlled scheduler over every point); the product never does,
// and an unset hook costs a load and a compare per point, in every build.

// point names a place just before an effect of the code, at which a hook
// may stop. Each is a state of tla/DrainRegistration.tla's model at the
// implementation's granularity: the goroutine is about to take the
// action named.
type point int8

const (
	// pointNone is no point: a lock of the trace whose point came before.
	pointNone point = iota - 1
	// pointSendRegister: a REGISTER is about to enter the loop's
	// registration (CollectorSendRegister; nothing shared changes).
	pointSendRegister
	// pointGateCheck: a registration is about to read closed
	// (ServiceRecvRegister).
	pointGateCheck
	// pointAdmit: a registration passed the service-level gate check and
	// knows its broker, before it reads the broker's gate word (TLA+ pc
	// "gated", before BrokerAdmit).
	pointAdmit
	// pointAdmitCAS: a registration read the broker's gate word and is
	// about to compare-and-swap it (BrokerAdmit's effect).
	pointAdmitCAS
	// pointNewBroker: the request loop is about to publish a new broker
	// in the broker list (then it reads closing).
	pointNewBroker
	// pointStartClose: a close is about to set closing
	// (ServiceStartClose).
	pointStartClose
	// pointCloseList: a close is about to read the broker list.
	pointCloseList
	// pointCloseBroker: a close (or brokerFor) is about to set broker b's
	// gate bit (ServiceCloseBroker(b)).
	pointCloseBroker
	// pointFinishClose: a close is about to set closed
	// (ServiceFinishClose).
	pointFinishClose
	// pointStartReport: a report is about to read closed
	// (ServiceStartReport).
	pointStartReport
	// pointReportList: a report is about to read the broker list.
	pointReportList
	// pointReadBroker: a report is about to read broker b's count (TLA+
	// ServiceReadBroker(b)).
	pointReadBroker
	// pointBrokerStep: a broker step of a registration or a removal that
	// leaves b's count as it is is about to write its line (broker.step).
	pointBrokerStep
	// pointCount: a broker step is about to change b's count (a rollback,
	// a release, a publish that replaced an entry).
	pointCount
	// pointUnsubscribe: a failed registration is about to release its
	// event-store subscription (BrokerUnsubscribe's effect).
	pointUnsubscribe
	// pointRelease: a removal is about to release its stores
	// (BrokerRemoveFinish's and BrokerReleaseOld's effect).
	pointRelease
)

// String returns the point's name (a schedule's printout).
func (p point) String() string {
	names := [...]string{"send-register", "gate-check", "admit", "admit-cas", "new-broker", "start-close",
		"close-list", "close-broker", "finish-close", "start-report", "report-list", "read-broker",
		"broker-step", "count", "unsubscribe", "release"}
	if p >= 0 && int(p) < len(names) {
		return names[p]
	}
	return "point?"
}

// hookFunc is called at each point with the broker concerned (nil for a
// point of no one broker). It runs on the goroutine that reached the
// point, with no lock of the service held.
type hookFunc func(point, *broker)

// at calls s's hook, if any, at p. The hook is set by a test before the
// service is shared (before Start), so a plain field suffices.
func (s *Service) at(p point, b *broker) {
	if s.hook != nil && p != pointNone {
		s.hook(p, b)
	}
}
