package eventservice

import (
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/impl/store/storetest"
	"github.com/drainproof/drainproof/impl/trace"
)

// The tests of this file put one goroutine's step between two steps of
// another, as the model at the implementation's granularity does: a
// registration stopped between the service's gate check and the
// broker's compare-and-swap (TLA+ pc "gated"), a close of admission
// stopped before a broker's gate bit (ServiceCloseBroker(b)), a failed
// registration stopped inside its store release (BrokerUnsubscribe). They
// use two brokers (clusters c1 and c2) and the points of hooks.go, which
// every build has, so that plain `go test` runs them.
//
// The property they check is the one a drain relies on (TLA+ DrainSafety
// over the sum of the brokers' counts): once a report says admission is
// closed, its count is at least every later count and at least the
// number of subscriptions the event stores still hold.

// pause is a one-shot stop at a point of the code: the first goroutine that
// reaches point p at the broker of cluster c runs fn, or if fn is nil
// signals entered and waits for release.
type pause struct {
	p        point
	c        ClusterID
	fn       func()
	hit      atomic.Bool
	entered  chan struct{}
	released chan struct{}
	once     sync.Once
}

// Entered is closed once a goroutine stopped at the pause.
func (x *pause) Entered() <-chan struct{} { return x.entered }

// Release lets the stopped goroutine go on (idempotent).
func (x *pause) Release() { x.once.Do(func() { close(x.released) }) }

// pauses is the hook of a harness: its armed pauses.
type pauses struct {
	mu   sync.Mutex
	list []*pause
}

func (ps *pauses) hook(p point, b *broker) {
	if b == nil {
		return // every pause is at one broker's point
	}
	ps.mu.Lock()
	var hit *pause
	for _, x := range ps.list {
		if x.p == p && x.c == b.cluster && x.hit.CompareAndSwap(false, true) {
			hit = x
			break
		}
	}
	ps.mu.Unlock()
	if hit == nil {
		return
	}
	if hit.fn != nil {
		hit.fn()
		return
	}
	close(hit.entered)
	<-hit.released
}

// pauseT is what at needs of a *testing.T or a *rapid.T.
type pauseT interface {
	Helper()
	Cleanup(func())
}

// at arms a pause at point p of cluster c's broker; fn nil means stop
// there until Release.
func (h *harness) at(t pauseT, p point, c ClusterID, fn func()) *pause {
	t.Helper()
	x := &pause{p: p, c: c, fn: fn, entered: make(chan struct{}), released: make(chan struct{})}
	t.Cleanup(x.Release)
	h.pauses.mu.Lock()
	h.pauses.list = append(h.pauses.list, x)
	h.pauses.mu.Unlock()
	return x
}

// regOn is an ordinary registration of id on table tbl of cluster c.
func regOn(c ClusterID, id DispatcherID, tbl TableID) Request {
	r := reg(id, tbl)
	r.Cluster = c
	return r
}

// twoBrokers registers d1 with c1's broker and d2 with c2's.
func twoBrokers(t *testing.T, h *harness) {
	t.Helper()
	for _, r := range []Request{regOn("c1", "d1", 1), regOn("c2", "d2", 2)} {
		if err := h.do(r); err != nil {
			t.Fatal(err)
		}
	}
}

// async runs req in the request loop on its own goroutine.
func async(h *harness, req Request) <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- h.do(req) }()
	return errc
}

// checkClosedReport fails unless the closed report (n, closed) counts at
// least what the brokers count now and every subscription the event
// stores hold now.
func (h *harness) checkClosedReport(t *testing.T, n int64, closed bool, when string) {
	t.Helper()
	if !closed {
		return
	}
	if now := h.svc.sumCounts(); now > n {
		t.Fatalf("%s: a report said (count %d, closed) but the brokers now count %d: a count rose after a closed report", when, n, now)
	}
	subs := 0
	for _, c := range []ClusterID{"c1", "c2"} {
		subs += len(h.eventStore(c).Subscribers())
	}
	if int64(subs) > n {
		t.Fatalf("%s: a report said (count %d, closed) while the event stores hold %d subscriptions", when, n, subs)
	}
}

// gatedReg is a registration of d3 on c2, with d1 on c1 and d2 on c2 already
// registered: stopped at its broker's gate word (gated) until released,
// then held in RegisterTable (held), its outcome on errc.
type gatedReg struct {
	h     *harness
	gated *pause
	held  *storetest.Hold
	errc  <-chan error
}

// gatedRegistration starts a harness with two brokers and a registration
// stopped between the gate check and the compare-and-swap.
func gatedRegistration(t *testing.T, opts ...harnessOption) (*harness, *gatedReg) {
	h := newHarness(t, opts...)
	twoBrokers(t, h)
	r := &gatedReg{h: h, gated: h.at(t, pointAdmit, "c2", nil), held: h.schemaStore("c2").BlockRegisterTable()}
	t.Cleanup(r.held.Release) // before the harness's: a failed test must not hold the loop
	r.errc = async(h, regOn("c2", "d3", 3))
	waitFor(t, r.gated.Entered(), "the registration at its gate word")
	return h, r
}

// finish lets the admitted registration complete and checks that it
// succeeded and that a report now counts all three, admission closed.
func (r *gatedReg) finish(t *testing.T) {
	t.Helper()
	r.held.Release()
	r.h.schemaStore("c2").Unblock()
	if err := waitFor(t, r.errc, "the registration's outcome"); err != nil {
		t.Fatalf("the registration admitted before the close failed: %v", err)
	}
	if n, closed := r.h.svc.Sample(); n != 3 || !closed {
		t.Fatalf("Sample after = (%d, %v), want (3, true)", n, closed)
	}
}

// TestReportClosesBeforeSampling: a registration passed the gate check
// before the node went STOPPING and is admitted while the report closes
// admission. The report closes first and samples after, so it counts the
// registration (caught: SampleBeforeClose, which sums first).
func TestReportClosesBeforeSampling(t *testing.T) {
	bothTraced(t, testReportClosesBeforeSampling)
}

func testReportClosesBeforeSampling(t *testing.T, opts ...harnessOption) {
	h, r := gatedRegistration(t, opts...)
	h.stopping.Store(true) // the node goes STOPPING
	// While the report closes admission (at c1's bit, before c2's), the
	// gated registration takes its compare-and-swap on c2's open gate.
	h.at(t, pointCloseBroker, "c1", func() {
		r.gated.Release()
		waitFor(t, r.held.Entered(), "the admitted registration in RegisterTable") // admitted and counted
	})
	n, closed := h.svc.Sample()
	if !closed {
		t.Fatal("a report of a STOPPING node left admission open")
	}
	h.checkClosedReport(t, n, closed, "during the registration")
	r.finish(t)
	h.checkQuiescent()
}

// TestCloseAdmissionClosesBrokersFirst: a report taken while
// CloseAdmission is between two brokers' gate bits must not say closed,
// since a broker whose bit is still open admits a registration that
// passed the gate check earlier (caught: ClosedBeforeBrokers).
func TestCloseAdmissionClosesBrokersFirst(t *testing.T) {
	bothTraced(t, testCloseAdmissionClosesBrokersFirst)
}

func testCloseAdmissionClosesBrokersFirst(t *testing.T, opts ...harnessOption) {
	h, r := gatedRegistration(t, opts...)
	closing := h.at(t, pointCloseBroker, "c2", nil)
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		h.svc.CloseAdmission()
	}()
	waitFor(t, closing.Entered(), "the close between two bits") // c1's bit is closed, c2's not yet
	n, isClosed := h.svc.Sample()
	r.gated.Release()
	waitFor(t, r.held.Entered(), "the admitted registration in RegisterTable") // admitted by c2's open bit
	h.checkClosedReport(t, n, isClosed, "between two brokers' gate bits")
	closing.Release()
	waitFor(t, closed, "CloseAdmission to return")
	r.finish(t)
	if err := h.do(regOn("c1", "d4", 4)); !errors.Is(err, ErrAdmissionClosed) {
		t.Fatalf("a registration after the close: %v, want ErrAdmissionClosed", err)
	}
	h.checkQuiescent()
}

// TestFailedRegistrationRollsBackLast is F-R1 at the code's granularity: a registration whose RegisterTable failed is stopped while
// it releases its event-store subscription; a report taken then still
// counts it (caught: RollbackBeforeUnsubscribe, which rolls the count
// back before the release).
func TestFailedRegistrationRollsBackLast(t *testing.T) {
	bothTraced(t, testFailedRegistrationRollsBackLast)
}

func testFailedRegistrationRollsBackLast(t *testing.T, opts ...harnessOption) {
	h := newHarness(t, opts...)
	if err := h.do(regOn("c1", "d1", 1)); err != nil {
		t.Fatal(err)
	}
	h.schemaStore("c2").FailOnce(nil)
	unsub := h.eventStore("c2").BlockUnregister()
	t.Cleanup(unsub.Release)
	errc := async(h, regOn("c2", "d2", 2))
	waitFor(t, unsub.Entered(), "the failed registration in UnregisterDispatcher") // marked removed, releasing its subscription
	h.stopping.Store(true)
	n, closed := h.svc.Sample()
	if !closed {
		t.Fatal("a report of a STOPPING node left admission open")
	}
	h.checkClosedReport(t, n, closed, "inside the failed registration's store release")
	unsub.Release()
	h.eventStore("c2").Unblock()
	if err := waitFor(t, errc, "the failed registration's outcome"); !errors.Is(err, storetest.ErrInjected) {
		t.Fatalf("failed registration: %v, want the injected RegisterTable error", err)
	}
	if n, _ := h.svc.Sample(); n != 1 {
		t.Fatalf("Sample after the rollback = %d, want 1", n)
	}
	h.checkQuiescent()
}

// TestBrokerCounts: BrokerCounts reads each broker's count and gate bit without the
// request loop, also while a registration holds it, and a close sets
// every bit.
func TestBrokerCounts(t *testing.T) {
	h := newHarness(t)
	if g := h.svc.BrokerCounts(); len(g) != 0 {
		t.Fatalf("BrokerCounts without brokers = %v", g)
	}
	twoBrokers(t, h)
	held := h.schemaStore("c1").BlockRegisterTable()
	t.Cleanup(held.Release)
	errc := async(h, regOn("c1", "d3", 3))
	waitFor(t, held.Entered(), "the registration in RegisterTable") // the loop is busy: d3 is counted, not published
	want := []BrokerCount{{Cluster: "c1", Count: 2}, {Cluster: "c2", Count: 1}}
	if g := h.svc.BrokerCounts(); !slices.Equal(g, want) {
		t.Fatalf("BrokerCounts = %v, want %v", g, want)
	}
	h.svc.CloseAdmission()
	want[0].GateClosed, want[1].GateClosed = true, true
	if g := h.svc.BrokerCounts(); !slices.Equal(g, want) {
		t.Fatalf("BrokerCounts after the close = %v, want %v", g, want)
	}
	held.Release()
	h.schemaStore("c1").Unblock()
	if err := waitFor(t, errc, "the registration's outcome"); err != nil {
		t.Fatal(err)
	}
	h.checkQuiescent()
}

// waitBound bounds every wait of these tests: code that skips the step a
// test waits for (a bug) fails the test in seconds, not at go test's
// timeout.
const waitBound = 10 * time.Second

// waitFor receives from ch, or fails the test after waitBound naming what
// it waited for.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitBound):
		t.Fatalf("waited %v for %s", waitBound, what)
		panic("unreachable")
	}
}

// bothTraced runs test untraced and traced: the traced service runs the
// same code (the same fault points and step hooks), so a bug it catches
// untraced it catches traced.
func bothTraced(t *testing.T, test func(*testing.T, ...harnessOption)) {
	t.Run("untraced", func(t *testing.T) { test(t) })
	t.Run("traced", func(t *testing.T) {
		tw, err := trace.NewWriter(io.Discard, trace.Header{Source: t.Name(), Model: map[string]any{"Brokers": []string{"c1", "c2"}}})
		if err != nil {
			t.Fatal(err)
		}
		test(t, func(c *Config) { c.Tracer = tw })
	})
}

// A removal's decrement is a point of its own (pointCount), after its
// store release and apart from the steps that leave the count as it is:
// stopped there, the dispatcher is unpublished and unsubscribed but still
// counted (R2, F6); released, the count falls. The subscribe step of a
// registration is no such point.
func TestRemovalStopsAtItsCountPoint(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.do(reg("d1", 1)))
	x := h.at(t, pointCount, "c1", nil)
	errc := async(h, rem("c1", "d1"))
	<-x.Entered()
	require.False(t, h.eventStore("c1").Subscribed("d1"), "stores released before the decrement")
	require.Equal(t, int64(1), h.svc.sumCounts(), "R2: counted until the decrement")
	x.Release()
	require.NoError(t, <-errc)
	require.Equal(t, int64(0), h.count())

	// A registration's subscribe step leaves the count as it is: its
	// first count point is none (the count was raised at admission).
	y := h.at(t, pointCount, "c1", nil)
	require.NoError(t, h.do(reg("d2", 2)))
	require.False(t, y.hit.Load(), "a registration without replacement changes no count after admission")
	h.checkQuiescent()
}

// Every point prints a name of its own (a schedule's printout), from the
// first to the last; pointNone and a value past the last print "point?".
func TestPointsPrintTheirNames(t *testing.T) {
	seen := map[string]point{}
	for p := pointSendRegister; p <= pointRelease; p++ {
		name := p.String()
		require.NotEqual(t, "point?", name, "point %d", int(p))
		_, dup := seen[name]
		require.False(t, dup, "point %d prints %q, as point %d does", int(p), name, int(seen[name]))
		seen[name] = p
	}
	require.Equal(t, "send-register", pointSendRegister.String())
	require.Equal(t, "release", pointRelease.String())
	require.Equal(t, "point?", pointNone.String())
	require.Equal(t, "point?", (pointRelease + 1).String())
}
