package eventservice

import (
	"time"

	"pgregory.net/rapid"

	"github.com/drainproof/drainproof/spec"
)

// The conformance test's close and report taken broker by broker: the
// points of hooks.go stop a CloseAdmission before the last broker's gate
// bit, and a Sample before the last broker's count;
// the model takes the steps the implementation took up to there, in the
// model's order, and the observable state is compared at the stop. A bug
// that reorders those steps (ClosedBeforeBrokers: closed before the
// bits; SampleBeforeClose: the counts read before the close) leaves the
// implementation elsewhere than the model at the stop, and the
// comparison fails.

// brokerIndex returns the model broker of cluster c.
func brokerIndex(c ClusterID) int {
	for b, x := range confClusters {
		if x == c {
			return b
		}
	}
	panic("unknown cluster " + string(c))
}

// stopped waits, bounded, for the pause x or for done (the paused call
// returned without stopping: a failure).
func stopped(t *rapid.T, x *pause, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-x.Entered():
	case <-done:
		t.Fatalf("%s returned without reaching its last broker's step", what)
	case <-time.After(waitBound):
		t.Fatalf("waited %v for %s to reach its last broker's step", waitBound, what)
	}
}

// finished waits, bounded, for done.
func finished(t *rapid.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(waitBound):
		t.Fatalf("waited %v for %s to return", waitBound, what)
	}
}

// closeByBroker runs CloseAdmission stopped before the last broker's gate
// bit (the node is STOPPING, the close not started): the model has taken
// ServiceStartClose and ServiceCloseBroker of the brokers before it.
func (c *conformance) closeByBroker(t *rapid.T) {
	brokers := *c.h.svc.brokers.Load()
	if c.inflight >= 0 || c.s.Liveness != spec.Stopping || c.s.Closing || len(brokers) == 0 {
		t.Skip("no close to take broker by broker")
	}
	last := brokers[len(brokers)-1]
	x := c.h.at(t, pointCloseBroker, last.cluster, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.h.svc.CloseAdmission()
	}()
	stopped(t, x, done, "CloseAdmission")
	c.step(t, "ServiceStartClose", c.m.ServiceStartClose)
	for _, br := range brokers[:len(brokers)-1] {
		b := brokerIndex(br.cluster)
		c.step(t, "ServiceCloseBroker("+confBrokers[b]+")", func(s *spec.State) (spec.State, bool) { return c.m.ServiceCloseBroker(s, b) })
	}
	c.compare(t) // between two brokers' bits
	x.Release()
	finished(t, done, "CloseAdmission")
	c.closeRest(t)
}

// reportByBroker runs Sample stopped before the last broker's count: the
// model has taken the heartbeat's start, the close if the node is
// STOPPING, the report's start and the reads of the brokers before it.
func (c *conformance) reportByBroker(t *rapid.T) {
	brokers := *c.h.svc.brokers.Load()
	if c.inflight >= 0 || len(brokers) == 0 {
		t.Skip("no report to take broker by broker")
	}
	last := brokers[len(brokers)-1]
	x := c.h.at(t, pointReadBroker, last.cluster, nil)
	var n int64
	var closed bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		n, closed = c.h.svc.Sample()
	}()
	stopped(t, x, done, "Sample")
	c.startSample(t)
	read := map[int]bool{}
	for _, br := range brokers[:len(brokers)-1] {
		b := brokerIndex(br.cluster)
		read[b] = true
		c.step(t, "ServiceReadBroker("+confBrokers[b]+")", func(s *spec.State) (spec.State, bool) { return c.m.ServiceReadBroker(s, b) })
	}
	c.compare(t) // between two brokers' reads
	x.Release()
	finished(t, done, "Sample")
	for b := range confBrokers {
		if !read[b] {
			c.step(t, "ServiceReadBroker("+confBrokers[b]+")", func(s *spec.State) (spec.State, bool) { return c.m.ServiceReadBroker(s, b) })
		}
	}
	c.sendSample(t, n, closed)
}
