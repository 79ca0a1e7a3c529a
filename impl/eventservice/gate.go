package eventservice

import (
	"github.com/drainproof/drainproof/tla/names"
	"slices"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/trace"
)

// This file is the admission gate (R8) and the report (F-R6): the close of
// admission, flag by flag and broker by broker, and the report that reads
// the gate and then each broker's count. Both run on their caller's
// goroutine, lock-free (atomics and the copy-on-write broker list).

// Sample returns the sum of the brokers' dispatcher counts and whether
// admission is closed (the TLA+ sample that a heartbeat or a report to
// the LogCoordinator carries). It never waits for the request loop or a
// store. If Config.Stopping says the node is STOPPING, Sample first closes
// admission; then it reads the gate, then the counts, so that a report
// with admissionClosed true counts every registration ever admitted and
// not yet fully removed: such a report's zero is final (R2, R8).
func (s *Service) Sample() (count int64, admissionClosed bool) { return s.sample(false) }

// Observe is Sample for an observer that is not the node's reporter (the
// gRPC Status call of an operator or a test harness): the same reads,
// locks and close, but its report start and broker reads are not traced.
// The model has one sample, the node's reporter's (its variable sample);
// an observer's reads change no other model variable, so they are not
// steps of the model. The close it may cause (the node STOPPING) is
// traced as any close is.
func (s *Service) Observe() (count int64, admissionClosed bool) { return s.sample(true) }

// sample is Sample (quiet: Observe, its report's lines not traced).
func (s *Service) sample(quiet bool) (count int64, admissionClosed bool) {
	if bugs.SampleBeforeCloseOn() {
		// The bug: the sum is taken before the close, so a registration
		// admitted in between is missing from a closed report.
		s.startReport(quiet)
		count = s.readCounts(quiet)
	}
	// TLA+ ServiceStartReport (NodeStartHeartbeat for a heartbeat's
	// sample): close admission when STOPPING, then read the flag; one
	// point before both (see gateCheck).
	s.at(pointStartReport, nil)
	if !s.closed.Load() && s.cfg.Stopping != nil && s.cfg.Stopping() {
		s.CloseAdmission()
	}
	if bugs.SampleBeforeCloseOn() {
		return count, s.closed.Load()
	}
	admissionClosed = s.startReport(quiet)
	return s.readCounts(quiet), admissionClosed
}

// startReport reads the gate for a report (TLA+ ServiceStartReport).
func (s *Service) startReport(quiet bool) bool {
	ts := s.lockTrace(pointNone, nil)
	closed := s.closed.Load()
	if ts != nil {
		if !quiet {
			ts.startReport(closed)
		}
		ts.mu.Unlock()
	}
	return closed
}

// readCounts returns the sum of the brokers' counts, read one broker at a
// time (TLA+ ServiceReadBroker(b) for each b; a model broker not created
// when the list is read counts 0 then).
func (s *Service) readCounts(quiet bool) int64 {
	ts := s.lockTrace(pointReportList, nil)
	brokers := *s.brokers.Load()
	if ts != nil {
		if !quiet {
			ts.absent(brokers, func(c ClusterID) { ts.readBroker(c, 0) })
		}
		ts.mu.Unlock()
	}
	var n int64
	for _, b := range brokers {
		ts := s.lockTrace(pointReadBroker, b)
		n += b.count()
		if ts != nil {
			if !quiet {
				ts.readBroker(b.cluster, n)
			}
			ts.mu.Unlock()
		}
	}
	return n
}

// sumCounts returns the sum of the brokers' counts, untraced (tests).
func (s *Service) sumCounts() int64 {
	var n int64
	for _, b := range *s.brokers.Load() {
		n += b.count()
	}
	return n
}

// CloseAdmission closes the admission gate, for good: every later
// registration is refused (R8). The node calls it when it goes STOPPING.
//
// The order makes a report that sees closed count every admitted
// registration (Go's atomics are sequentially consistent). An admission
// to broker b succeeds by a compare-and-swap of b.countGate with the gate bit
// clear, so it comes before the store that set b's bit. That store is
// either the one here, before closed is set (so before a report sees it),
// or the one brokerFor makes when it created b after it saw closing; but
// brokerFor runs in the request loop before any admission to b, which
// would then be refused. If brokerFor did not see closing, closing was
// set after b was in the broker list, so the loop here sets b's bit.
func (s *Service) CloseAdmission() { s.closeAdmission(false) }

// closeAdmission is CloseAdmission; byGate tells that a registration's
// gate check found the node STOPPING (TLA+ ServiceRecvRegister, refused,
// starts the close).
func (s *Service) closeAdmission(byGate bool) {
	if s.closed.Load() {
		return
	}
	ts := s.lockTrace(pointStartClose, nil)
	started := !s.closing.Swap(true) // TLA+ ServiceStartClose
	if ts != nil {
		if started {
			ts.startClose(byGate)
		}
		ts.mu.Unlock()
	}
	if bugs.ClosedBeforeBrokersOn() {
		s.finishClose() // the bug: closed before the brokers' bits
	}
	ts = s.lockTrace(pointCloseList, nil)
	brokers := *s.brokers.Load()
	if ts != nil {
		ts.absent(brokers, ts.closedBroker) // created closed by brokerFor
		ts.mu.Unlock()
	}
	for _, b := range brokers {
		s.closeBroker(b) // TLA+ ServiceCloseBroker(b)
	}
	s.finishClose() // TLA+ ServiceFinishClose
}

// closeBroker sets b's gate bit (TLA+ ServiceCloseBroker(b)).
func (s *Service) closeBroker(b *broker) {
	ts := s.lockTrace(pointCloseBroker, b)
	b.countGate.Or(gateClosed)
	if ts != nil {
		ts.closedBroker(b.cluster)
		ts.mu.Unlock()
	}
}

// finishClose sets closed (TLA+ ServiceFinishClose).
func (s *Service) finishClose() {
	ts := s.lockTrace(pointFinishClose, nil)
	finished := !s.closed.Swap(true)
	if ts != nil {
		if finished {
			ts.emit(names.ServiceFinishClose, "", "", trace.Bool("admissionClosed", true))
		}
		ts.mu.Unlock()
	}
}

// BrokerCounts returns each broker's count and gate bit, sorted by
// cluster, one atomic load per broker (so, like Sample's sum, not one
// atomic read of them all). It never waits for the request loop or a store, and never
// closes admission.
func (s *Service) BrokerCounts() []BrokerCount {
	brokers := *s.brokers.Load()
	out := make([]BrokerCount, 0, len(brokers))
	for _, b := range brokers {
		w := b.countGate.Load()
		out = append(out, BrokerCount{Cluster: b.cluster, Count: w >> 1, GateClosed: w&gateClosed != 0})
	}
	slices.SortFunc(out, func(x, y BrokerCount) int { return compare(x.Cluster, y.Cluster) })
	return out
}

// AdmissionClosed reports whether the admission gate is closed.
func (s *Service) AdmissionClosed() bool { return s.closed.Load() }
