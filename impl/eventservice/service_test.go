package eventservice

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
	"github.com/drainproof/drainproof/impl/trace"
)

// R1, F-R3, F-R4 (upstream TestEventServiceDispatcherCount): the count
// counts ordinary and table-trigger dispatchers once each, across
// clusters, while a concurrent reader reports in a loop.
func TestDispatcherCount(t *testing.T) {
	h := newHarness(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			// A replacement is counted twice for a moment (the new
			// registration's early count precedes the old one's deferred
			// decrement): conservative, so up to 3 here, never negative.
			if n, _ := h.svc.Sample(); n < 0 || n > 3 {
				t.Errorf("R1: concurrent report %d outside 0..3", n)
				return
			}
		}
	})
	steps := []struct {
		name string
		req  Request
		want int64
	}{
		{"register ordinary", reg("d1", 1), 1},
		{"repeat ordinary counts once", reg("d1", 1), 1},
		{"table trigger on another cluster", trig("c2", "t1"), 2},
		{"repeat table trigger counts once", trig("c2", "t1"), 2},
		{"remove ordinary", rem("c1", "d1"), 1},
		{"repeat remove is a no-op", rem("c1", "d1"), 1},
		{"remove table trigger", rem("c2", "t1"), 0},
	}
	for _, st := range steps {
		require.NoError(t, h.do(st.req), st.name)
		require.Equal(t, st.want, h.count(), st.name)
		h.checkQuiescent()
	}
	close(stop)
	wg.Wait()
}

// R2, R8, F-R6, F-R7 (upstream TestStopAcceptingRegistrations): a
// registration blocked in RegisterTable is counted by a STOPPING report,
// which returns while RegisterTable is blocked; late registrations are
// refused without a broker, a subscription or a count.
func TestStopAcceptingRegistrations(t *testing.T) {
	h := newHarness(t)
	gate := h.schemaStore("c1").BlockRegisterTable()
	defer gate.Release() // unblock the loop if the test fails
	errc := make(chan error, 1)
	go func() { errc <- h.do(reg("d1", 1)) }()
	<-gate.Entered()

	// The node goes STOPPING. Sample must return now, with RegisterTable
	// still blocked (if it waited for the loop or the store, this test
	// would deadlock), and must count the in-flight registration.
	h.stopping.Store(true)
	n, closed := h.svc.Sample()
	require.True(t, closed, "R8: STOPPING report closes admission")
	require.Equal(t, int64(1), n, "R2: in-flight registration counted")
	require.True(t, h.eventStore("c1").Subscribed("d1"))

	// The admitted registration still completes after admission closed.
	gate.Release()
	require.NoError(t, <-errc)
	require.Equal(t, int64(1), h.count())

	require.NoError(t, h.do(rem("c1", "d1")))
	n, closed = h.svc.Sample()
	require.Equal(t, int64(0), n)
	require.True(t, closed)

	late := []struct {
		name   string
		req    Request
		answer bool // a NotReusable answer goes to req.Topic
	}{
		{"local", reg("d2", 2), false},
		{"remote probe", Request{Action: Register, Cluster: "c1", Changefeed: "cf1", Dispatcher: "d3", Table: 3, OnlyReuse: true, Topic: "collector"}, true},
		{"redo remote probe on a new cluster", Request{Action: Register, Cluster: "c9", Changefeed: "cf1", Dispatcher: "d4", Table: 4, OnlyReuse: true, Topic: "redo-collector"}, true},
		{"table trigger", trig("c1", "t1"), false},
	}
	for _, tt := range late {
		t.Run(tt.name, func(t *testing.T) {
			h.takeEvents()
			require.ErrorIs(t, h.do(tt.req), ErrAdmissionClosed) // R8
			n, closed := h.svc.Sample()
			require.Equal(t, int64(0), n)
			require.True(t, closed)
			require.False(t, h.eventStore(tt.req.Cluster).Subscribed(tt.req.Dispatcher))
			_, hasBroker := h.broker("c9")
			require.False(t, hasBroker, "no broker for a refused registration")
			ev := h.takeEvents()
			if tt.answer {
				require.Equal(t, []Event{{Kind: EventNotReusable, Cluster: tt.req.Cluster, Dispatcher: tt.req.Dispatcher, Topic: tt.req.Topic}}, ev)
			} else {
				require.Empty(t, ev, "local registrations are dropped silently")
			}
		})
	}
	h.checkQuiescent()
}

// R8 (upstream TestEventServiceReportsWithoutBrokers): reports work with
// no broker; admission closes one way, by CloseAdmission or STOPPING.
func TestReportsWithoutBrokers(t *testing.T) {
	tests := []struct {
		name  string
		close func(h *harness)
	}{
		{"CloseAdmission", func(h *harness) { h.svc.CloseAdmission() }},
		{"Stopping seen by a report", func(h *harness) { h.stopping.Store(true); h.svc.Sample() }},
		{"Stopping seen by the gate", func(h *harness) { h.stopping.Store(true) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			n, closed := h.svc.Sample()
			require.Equal(t, int64(0), n)
			require.False(t, closed)
			tt.close(h)
			probe := Request{Action: Register, Cluster: "c1", Changefeed: "cf1", Dispatcher: "d1", Table: 1, OnlyReuse: true, Topic: "collector"}
			require.ErrorIs(t, h.do(probe), ErrAdmissionClosed)
			require.Equal(t, []EventKind{EventNotReusable}, kinds(h.takeEvents()))
			n, closed = h.svc.Sample()
			require.Equal(t, int64(0), n)
			require.True(t, closed)
			h.stopping.Store(false)
			require.True(t, h.svc.AdmissionClosed(), "admission never reopens")
			require.Empty(t, h.snapshot().Brokers)
		})
	}
}

// Upstream TestPendingHeartbeatWithoutBroker: a heartbeat for an unknown
// cluster answers Removed for each dispatcher, echoing the cluster.
func TestHeartbeatWithoutBroker(t *testing.T) {
	h := newHarness(t)
	resp, err := h.svc.Heartbeat(context.Background(), Heartbeat{Cluster: "c7", Progress: []Progress{{Dispatcher: "d1"}, {Dispatcher: "d2"}}})
	require.NoError(t, err)
	require.Equal(t, HeartbeatResponse{Cluster: "c7", Removed: []DispatcherID{"d1", "d2"}}, resp)
}

// R1, R4, R5, R9, F-R3 (upstream TestPendingHeartbeatBeforeRegistration):
// a heartbeat before the REGISTER answers Removed; a repeated REGISTER
// replaces the old registration (old stat removed, new epoch 0) and keeps
// one count, one subscription and one schema reference; RESET works on
// the new one; the final REMOVE leaves nothing.
func TestRepeatedRegistrationReplaces(t *testing.T) {
	for _, handshaked := range []bool{false, true} {
		t.Run(map[bool]string{false: "pending", true: "handshaked"}[handshaked], func(t *testing.T) {
			h := newHarness(t)
			es, ss := h.eventStore("c1"), h.schemaStore("c1")
			resp, err := h.svc.Heartbeat(context.Background(), Heartbeat{Cluster: "c1", Progress: []Progress{{Dispatcher: "d1"}}})
			require.NoError(t, err)
			require.Equal(t, []DispatcherID{"d1"}, resp.Removed)

			require.NoError(t, h.do(reg("d1", 1)))
			if handshaked {
				require.NoError(t, h.do(reset("c1", "d1", 1, 100)))
			}
			// Keep the first registration's notifier, as an event-store
			// goroutine that already picked it up would.
			var oldNotify func()
			func() {
				b := h.svc.byClusterForTest("c1")
				d := b.lookup("d1")
				token := d.gen
				oldNotify = func() { d.Notify(token) }
			}()
			h.takeEvents()

			require.NoError(t, h.do(reg("d1", 1))) // the collector re-registers
			require.Equal(t, int64(1), h.count(), "F-R3: counted once")
			require.Equal(t, 1, ss.Refs(1), "R9: one schema reference")
			require.Equal(t, 1, es.Unregisters(), "old subscription released once")
			b, _ := h.broker("c1")
			require.Equal(t, uint64(0), b.Dispatchers[0].Epoch, "R5: new stat starts at epoch 0")

			oldNotify() // R4/R5: the replaced stat is marked removed
			require.Empty(t, h.takeEvents())
			require.Equal(t, int64(1), h.svc.DroppedNotifications())

			require.True(t, es.Notify("d1"))
			require.Equal(t, []EventKind{EventReady}, kinds(h.takeEvents()), "new stat sends Ready")
			require.NoError(t, h.do(reset("c1", "d1", 1, 200)))
			require.True(t, es.Notify("d1"))
			require.True(t, es.Notify("d1"))
			require.Equal(t, []Event{{Kind: EventHandshake, Cluster: "c1", Dispatcher: "d1", Epoch: 1}}, h.takeEvents())
			h.checkQuiescent()

			require.NoError(t, h.do(rem("c1", "d1")))
			require.Equal(t, int64(0), h.count())
			require.Zero(t, ss.TotalRefs())
			require.Empty(t, es.Subscribers())
			h.checkQuiescent()
		})
	}
}

// byClusterForTest reads the broker map; call only while the loop is idle
// (between Do calls of one goroutine).
func (s *Service) byClusterForTest(c ClusterID) *broker {
	s.brokersMu.Lock()
	defer s.brokersMu.Unlock()
	return s.byCluster[c]
}

// recordingEventStore keeps every notifier it was given, even after
// UnregisterDispatcher, to play a notification already in flight on an
// event-store goroutine when the dispatcher is released.
type recordingEventStore struct {
	*storetest.EventStore
	mu        sync.Mutex
	notifiers []func()
	targets   []store.Notifier
}

func (r *recordingEventStore) RegisterDispatcher(id DispatcherID, sub store.Subscription, n store.Notifier) bool {
	r.mu.Lock()
	r.notifiers = append(r.notifiers, func() { n.Notify(sub.Token) })
	r.targets = append(r.targets, n)
	r.mu.Unlock()
	return r.EventStore.RegisterDispatcher(id, sub, n)
}

// R3, R4, F-R1 (upstream TestAddDispatcherUnregisterOnSchemaStoreError
// and TestAddDispatcherFailure): RegisterTable fails after
// RegisterDispatcher succeeded; the broker marks the dispatcher removed,
// unregisters it, drops its changefeed status and rolls the count back.
func TestRegisterTableFailureLeavesNoTrace(t *testing.T) {
	tests := []struct {
		name    string
		install func(*storetest.MemSchemaStore)
	}{
		{"fails once", func(s *storetest.MemSchemaStore) { s.FailOnce(nil) }},
		{"fails always", func(s *storetest.MemSchemaStore) { s.FailAlways(nil) }},
		{"fails on a predicate", func(s *storetest.MemSchemaStore) {
			s.FailIf(func(tbl TableID, _ uint64) bool { return tbl == 1 }, context.Canceled)
		}},
		{"closed", func(s *storetest.MemSchemaStore) { s.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingEventStore{EventStore: storetest.NewMemEventStore()}
			ss := storetest.NewMemSchemaStore()
			var h *harness
			h = newHarness(t, func(c *Config) {
				c.NewStores = func(ClusterID) (store.EventStore, store.SchemaStore) { return rec, ss }
				c.Emit = func(e Event) { h.mu.Lock(); h.events = append(h.events, e); h.mu.Unlock() }
			})
			tt.install(ss)
			// A notification arrives while RegisterTable is in progress: the
			// residual window of F-R1, where a Ready may still go out.
			gate := ss.BlockRegisterTable()
			defer gate.Release() // unblock the loop if the test fails
			errc := make(chan error, 1)
			go func() { errc <- h.do(reg("d1", 1)) }()
			<-gate.Entered()
			require.Equal(t, int64(1), h.count(), "R2: counted before the first store effect")
			require.True(t, rec.Notify("d1"))
			gate.Release()
			require.Error(t, <-errc)

			require.False(t, rec.Subscribed("d1"), "F-R1: still subscribed in the event store")
			require.Equal(t, 1, rec.Unregisters())
			require.Zero(t, ss.TotalRefs())
			require.Equal(t, int64(0), h.count(), "R3: count rolled back")
			b, ok := h.broker("c1")
			require.True(t, ok)
			require.Empty(t, b.Dispatchers)
			require.Empty(t, b.Changefeeds, "R3: changefeed status removed")

			// R4: a notification still in flight on an event-store goroutine
			// is dropped, so no Ready reaches the collector for a dispatcher
			// the broker does not know.
			h.takeEvents()
			for _, n := range rec.notifiers {
				n()
			}
			require.Empty(t, h.takeEvents())
			h.checkQuiescent()
		})
	}
}

// R3 (TLA+ BrokerSubscribeRefused): a refused RegisterDispatcher rolls the
// count back and answers NotReusable; no schema reference is taken.
func TestSubscribeRefusedRollsBack(t *testing.T) {
	h := newHarness(t)
	h.eventStore("c1").Refuse(func(_ DispatcherID, s store.Subscription) bool { return s.OnlyReuse })
	probe := reg("d1", 1)
	probe.OnlyReuse, probe.Topic = true, "collector"
	require.ErrorIs(t, h.do(probe), ErrNotReusable)
	require.Equal(t, []Event{{Kind: EventNotReusable, Cluster: "c1", Dispatcher: "d1", Topic: "collector"}}, h.takeEvents())
	require.Equal(t, int64(0), h.count())
	require.Zero(t, h.schemaStore("c1").Registers())
	b, _ := h.broker("c1")
	require.Empty(t, b.Changefeeds)
	h.eventStore("c1").Close()
	require.ErrorIs(t, h.do(reg("d2", 2)), ErrNotReusable)
	h.checkQuiescent()
}

// R6 (upstream TestResetDispatcher, TestCURDDispatcher): a reset of an
// unknown ID creates nothing; a stale epoch has no effect; a newer one
// replaces the stat and updates startTs; no reset changes the count.
func TestReset(t *testing.T) {
	h := newHarness(t)
	require.ErrorIs(t, h.do(reset("c1", "d1", 1, 5)), ErrUnknownDispatcher)
	require.Empty(t, h.snapshot().Brokers)
	require.NoError(t, h.do(reg("d1", 1)))
	require.NoError(t, h.do(trig("c1", "t1")))
	steps := []struct {
		name      string
		req       Request
		wantEpoch uint64
		wantStart uint64
	}{
		{"newer epoch takes effect", reset("c1", "d1", 2, 300), 2, 300},
		{"equal epoch is stale", reset("c1", "d1", 2, 400), 2, 300},
		{"older epoch is stale", reset("c1", "d1", 1, 500), 2, 300},
		{"newer again", reset("c1", "d1", 5, 600), 5, 600},
	}
	for _, st := range steps {
		require.NoError(t, h.do(st.req), st.name)
		b, _ := h.broker("c1")
		require.Equal(t, st.wantEpoch, b.Dispatchers[0].Epoch, st.name)
		require.Equal(t, st.wantStart, b.Dispatchers[0].StartTs, st.name)
		require.Equal(t, []ChangefeedID{"cf1"}, b.Changefeeds)
		require.Equal(t, int64(2), h.count(), "R6: reset never changes the count")
	}
	require.NoError(t, h.do(reset("c1", "t1", 1, 0)), "table triggers reset too")
	require.Equal(t, int64(2), h.count())
	require.NoError(t, h.do(rem("c1", "d1")))
	require.NoError(t, h.do(rem("c1", "t1")))
	b, _ := h.broker("c1")
	require.Empty(t, b.Changefeeds, "changefeed status removed with its last dispatcher")
	h.checkQuiescent()
}

// R6, R7 (upstream TestResetDispatcherConcurrently): concurrent resets
// leave the largest epoch.
func TestResetConcurrently(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.do(reg("d1", 1)))
	var wg sync.WaitGroup
	for e := uint64(1); e <= 10; e++ {
		wg.Go(func() { require.NoError(t, h.do(reset("c1", "d1", e, e*10))) })
	}
	wg.Wait()
	b, _ := h.broker("c1")
	require.Equal(t, uint64(10), b.Dispatchers[0].Epoch)
	require.Equal(t, int64(1), b.Count)
}

// F-R4 (upstream TestTableTriggerDispatcherMetricCount): a table trigger
// counts +1 and back, touching neither store.
func TestTableTriggerCount(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.do(trig("c1", "t1")))
	require.Equal(t, int64(1), h.count())
	require.NoError(t, h.do(rem("c1", "t1")))
	require.Equal(t, int64(0), h.count())
	require.Zero(t, h.eventStore("c1").Registers()+h.eventStore("c1").Unregisters())
	require.Zero(t, h.schemaStore("c1").Registers()+h.schemaStore("c1").Unregisters())
}

// R2, F6: a removal decrements only after its store cleanup; a report
// taken while the event store is still detaching the dispatcher counts it.
func TestRemoveDecrementsAfterCleanup(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.do(reg("d1", 1)))
	gate := h.eventStore("c1").BlockUnregister()
	defer gate.Release() // unblock the loop if the test fails
	errc := make(chan error, 1)
	go func() { errc <- h.do(rem("c1", "d1")) }()
	<-gate.Entered()
	require.Equal(t, int64(1), h.count(), "R2: half-removed dispatcher still counted")
	require.Equal(t, 1, h.schemaStore("c1").Refs(1))
	gate.Release()
	require.NoError(t, <-errc)
	require.Equal(t, int64(0), h.count())
	h.checkQuiescent()
}

// R1, F-R2: two removers that both found the same entry (the loop's REMOVE
// and the inactivity cleanup) decrement once: only the one whose
// compare-and-delete succeeded goes on.
func TestConcurrentRemoversDecrementOnce(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.do(reg("d1", 1)))
	require.NoError(t, h.do(trig("c1", "t1")))
	b := h.svc.byClusterForTest("c1")
	d, tt := b.lookup("d1"), b.lookup("t1")
	for _, x := range []*dispatcher{d, tt} {
		var wg sync.WaitGroup
		won := make(chan bool, 2)
		for range 2 {
			wg.Go(func() { won <- b.remove(x, stepRemoveFinish) })
		}
		wg.Wait()
		close(won)
		wins := 0
		for w := range won {
			if w {
				wins++
			}
		}
		require.Equal(t, 1, wins, "exactly one remover deleted %s", x.id)
	}
	require.Equal(t, int64(0), h.count(), "F-R2: double decrement")
	h.checkQuiescent()
}

// R6 (upstream TestHandleDispatcherHeartbeatEpochFilter): a heartbeat
// applies only at the dispatcher's epoch.
func TestHeartbeatEpochFilter(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.do(reg("d1", 1)))
	require.NoError(t, h.do(reset("c1", "d1", 2, 100)))
	hb := func(epoch, ts uint64) {
		resp, err := h.svc.Heartbeat(context.Background(), Heartbeat{Cluster: "c1", Progress: []Progress{{Dispatcher: "d1", CheckpointTs: ts, Epoch: epoch}}})
		require.NoError(t, err)
		require.Empty(t, resp.Removed)
	}
	checkpoint := func() uint64 { b, _ := h.broker("c1"); return b.Dispatchers[0].CheckpointTs }
	hb(1, 500)
	require.Equal(t, uint64(100), checkpoint(), "older epoch ignored")
	hb(3, 500)
	require.Equal(t, uint64(100), checkpoint(), "newer epoch (overtook its RESET) ignored")
	hb(2, 500)
	require.Equal(t, uint64(500), checkpoint())
	hb(2, 400)
	require.Equal(t, uint64(500), checkpoint(), "checkpoint never goes back")
}

// R7 (upstream TestHandleDispatcherHeartbeat_InactiveDispatcherCleanup):
// the inactivity cleanup removes handshaked dispatchers silent for longer
// than the timeout, and any silent dispatcher once admission is closed.
func TestInactivityCleanup(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.InactivityTimeout = time.Minute })
	require.NoError(t, h.do(reg("pending", 1)))
	require.NoError(t, h.do(reg("handshaked", 2)))
	require.NoError(t, h.do(reset("c1", "handshaked", 1, 100)))
	require.NoError(t, h.do(reg("alive", 3)))
	require.NoError(t, h.do(reset("c1", "alive", 1, 100)))
	cleanup := func() int {
		n, err := h.svc.Cleanup(context.Background())
		require.NoError(t, err)
		return n
	}
	require.Zero(t, cleanup(), "nothing silent yet")
	h.advance(2 * time.Minute)
	_, err := h.svc.Heartbeat(context.Background(), Heartbeat{Cluster: "c1", Progress: []Progress{{Dispatcher: "alive", Epoch: 1}}})
	require.NoError(t, err)
	require.Equal(t, 1, cleanup())
	b, _ := h.broker("c1")
	require.Equal(t, []DispatcherID{"alive", "pending"}, ids(b))
	h.svc.CloseAdmission()
	require.Equal(t, 1, cleanup(), "stopping broker cleans silent pending dispatchers too")
	h.advance(2 * time.Minute)
	require.Equal(t, 1, cleanup())
	require.Equal(t, int64(0), h.count())
	h.checkQuiescent()
}

// R7 (upstream TestEventServiceSerializesDispatcherCleanup): while the
// inactivity cleanup is releasing a dispatcher's stores, its entry is gone
// but the count is 1, and a REGISTER for the same ID queued meanwhile runs
// only after the cleanup finished, so its fresh subscription survives.
func TestCleanupSerializedWithRegistration(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.InactivityTimeout = time.Minute })
	require.NoError(t, h.do(reg("d1", 1)))
	require.NoError(t, h.do(reset("c1", "d1", 1, 100)))
	h.advance(time.Hour)
	es := h.eventStore("c1")
	gate := es.BlockUnregister()
	defer gate.Release() // unblock the loop if the test fails
	cleaned := make(chan int, 1)
	go func() { n, _ := h.svc.Cleanup(context.Background()); cleaned <- n }()
	<-gate.Entered()
	require.Equal(t, int64(1), h.count(), "R2: count held until the cleanup's store release")
	require.NoError(t, h.svc.Submit(context.Background(), reg("d1", 1)))
	es.Unblock()
	gate.Release()
	require.Equal(t, 1, <-cleaned)
	h.checkQuiescent() // runs after the queued REGISTER (FIFO)
	require.True(t, es.Subscribed("d1"), "R7: re-registration's subscription survived the cleanup")
	require.Equal(t, int64(1), h.count())
	require.NoError(t, h.do(rem("c1", "d1")))
	require.Equal(t, int64(0), h.count())
	h.checkQuiescent()
}

func TestRequestValidationAndStop(t *testing.T) {
	_, err := New(Config{})
	require.ErrorIs(t, err, ErrBadRequest)
	h := newHarness(t)
	for _, bad := range []Request{{}, {Action: Register}, reset("c1", "d1", 0, 0)} {
		require.ErrorIs(t, h.do(bad), ErrBadRequest)
		require.ErrorIs(t, h.svc.Submit(context.Background(), bad), ErrBadRequest)
	}

	svc, err := New(Config{NewStores: func(ClusterID) (store.EventStore, store.SchemaStore) {
		return storetest.NewMemEventStore(), storetest.NewMemSchemaStore()
	}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, svc.Run(ctx), context.Canceled)
	require.ErrorIs(t, svc.Do(context.Background(), reg("d1", 1)), ErrStopped)
	require.PanicsWithValue(t, "eventservice: Run called twice", func() { _ = svc.Run(ctx) })
}

// A Register names its dispatcher, its cluster, its changefeed and
// (unless it is a table trigger) its table: without them it is a bad
// request, not a silent registration under empty names. The same request
// as a Reset without an epoch, or with an unknown action, is bad too.
func TestRegisterRequiresClusterChangefeedTable(t *testing.T) {
	h := newHarness(t)
	ok := reg("d1", 1)
	for name, change := range map[string]func(*Request){
		"no cluster":                      func(r *Request) { r.Cluster = "" },
		"no changefeed":                   func(r *Request) { r.Changefeed = "" },
		"no table":                        func(r *Request) { r.Table = 0 },
		"negative table":                  func(r *Request) { r.Table = -1 },
		"remote probe without changefeed": func(r *Request) { r.Changefeed, r.OnlyReuse = "", true },
		"no dispatcher":                   func(r *Request) { r.Dispatcher = "" },
		"a reset without an epoch, with a changefeed and a table": func(r *Request) { r.Action = Reset },
		"an unknown action": func(r *Request) { r.Action = Reset + 1 },
	} {
		bad := ok
		change(&bad)
		require.ErrorIs(t, h.do(bad), ErrBadRequest, name)
		require.ErrorIs(t, h.svc.Submit(context.Background(), bad), ErrBadRequest, name)
	}
	require.Empty(t, h.snapshot().Brokers)
	tt := trig("c1", "t1")
	require.NoError(t, h.do(tt), "a table trigger has no table")
	require.NoError(t, h.do(ok))
	require.ErrorIs(t, h.do(Request{Action: Remove, Dispatcher: "d1"}), ErrBadRequest, "remove without cluster")
}

// Before Run or Start, the calls that wait for the request loop return
// ErrNotRunning at once instead of blocking; Start makes them work from
// its return.
func TestCallsBeforeRun(t *testing.T) {
	svc, err := New(Config{NewStores: func(ClusterID) (store.EventStore, store.SchemaStore) {
		return storetest.NewMemEventStore(), storetest.NewMemSchemaStore()
	}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.ErrorIs(t, svc.Do(ctx, reg("d1", 1)), ErrNotRunning)
	require.ErrorIs(t, svc.Do(context.Background(), reg("d1", 1)), ErrNotRunning)
	_, err = svc.Heartbeat(ctx, Heartbeat{Cluster: "c1"})
	require.ErrorIs(t, err, ErrNotRunning)
	_, err = svc.Cleanup(ctx)
	require.ErrorIs(t, err, ErrNotRunning)
	_, err = svc.Snapshot(ctx)
	require.ErrorIs(t, err, ErrNotRunning)

	runCtx, stop := context.WithCancel(context.Background())
	wait := svc.Start(runCtx)
	require.NoError(t, svc.Do(context.Background(), reg("d1", 1)))
	n, _ := svc.Sample()
	require.Equal(t, int64(1), n)
	require.PanicsWithValue(t, "eventservice: Run called twice", func() { _ = svc.Run(runCtx) })
	stop()
	require.ErrorIs(t, wait(), context.Canceled)
	require.ErrorIs(t, svc.Do(context.Background(), reg("d2", 2)), ErrStopped)
}

// R4, R5: a released dispatcher is reused for a later registration (of
// another ID here); a notification of the earlier registration that was
// still under way in the event store is dropped, and never acts on the
// new one. Run under -race with the calls racing the reuse, it also shows
// that Notify reads the reused fields only as a reader of the
// dispatcher's nstate, which the removal and the reuse exclude.
func TestReusedDispatcherDropsEarlierNotifications(t *testing.T) {
	rec := &recordingEventStore{EventStore: storetest.NewMemEventStore()}
	var h *harness
	h = newHarness(t, func(c *Config) {
		c.NewStores = func(ClusterID) (store.EventStore, store.SchemaStore) { return rec, storetest.NewMemSchemaStore() }
		c.Emit = func(e Event) { h.mu.Lock(); h.events = append(h.events, e); h.mu.Unlock() }
	})
	require.NoError(t, h.do(reg("d1", 1)))
	require.NoError(t, h.do(rem("c1", "d1")))
	require.NoError(t, h.do(reg("d2", 2)))
	b := h.svc.byClusterForTest("c1")
	if !b.offLoop {
		require.Same(t, rec.targets[0], rec.targets[1], "the released dispatcher is reused")
	}
	h.takeEvents()
	rec.notifiers[0]() // d1's, under way since before its removal
	require.Empty(t, h.takeEvents(), "R4: no event for the earlier registration")
	require.Equal(t, int64(1), h.svc.DroppedNotifications())
	rec.notifiers[1]()
	require.Equal(t, []Event{{Kind: EventReady, Cluster: "c1", Dispatcher: "d2"}}, h.takeEvents())
	require.Same(t, b.lookup("d2"), rec.targets[1])

	// The earlier registrations' calls race further reuses.
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			rec.mu.Lock()
			ns := rec.notifiers[:2:2]
			rec.mu.Unlock()
			ns[0]()
		}
	})
	for i := range 200 {
		id := DispatcherID(fmt.Sprintf("x%d", i%3))
		require.NoError(t, h.do(reg(id, TableID(10+i%3))))
		require.NoError(t, h.do(rem("c1", id)))
	}
	close(done)
	wg.Wait()
	require.Empty(t, h.takeEvents(), "R4: an earlier registration's call acted on a reused dispatcher")
	require.NoError(t, h.do(rem("c1", "d2")))
	h.checkQuiescent()
}

// The changefeed status lists exactly the changefeeds of the published
// dispatchers, when a changefeed's last dispatcher leaves and another
// changefeed's arrives (the emptied status kept idle must not take the
// newcomer), and when the idle one returns; and the broker keeps at most
// one empty status, so changefeeds coming and going do not grow it.
func TestChangefeedStatusFollowsItsDispatchers(t *testing.T) {
	regIn := func(id DispatcherID, cf ChangefeedID, tbl TableID) Request {
		r := reg(id, tbl)
		r.Changefeed = cf
		return r
	}
	type step struct {
		name string
		req  Request
		want []ChangefeedID
	}
	scenarios := map[string][]step{
		"changefeeds come and go": {
			{"first of cf1", regIn("d1", "cf1", 1), []ChangefeedID{"cf1"}},
			{"cf1 empties", rem("c1", "d1"), nil},
			{"first of cf2 after cf1 emptied", regIn("d2", "cf2", 2), []ChangefeedID{"cf2"}},
			{"cf1 returns", regIn("d3", "cf1", 3), []ChangefeedID{"cf1", "cf2"}},
			{"second of cf2", regIn("d4", "cf2", 4), []ChangefeedID{"cf1", "cf2"}},
			{"cf2 loses one", rem("c1", "d2"), []ChangefeedID{"cf1", "cf2"}},
			{"cf2 empties", rem("c1", "d4"), []ChangefeedID{"cf1"}},
			{"cf1 empties, cf2 idle dropped", rem("c1", "d3"), nil},
			{"cf3 after two idle changefeeds", regIn("d5", "cf3", 5), []ChangefeedID{"cf3"}},
			{"cf1 again, by a table trigger", trig("c1", "t2"), []ChangefeedID{"cf1", "cf3"}},
		},
		"the idle status taken back, then another empties": {
			{"first of cf2", regIn("dA", "cf2", 1), []ChangefeedID{"cf2"}},
			{"first of cf1", regIn("d1", "cf1", 2), []ChangefeedID{"cf1", "cf2"}},
			{"cf1 empties", rem("c1", "d1"), []ChangefeedID{"cf2"}},
			{"cf1 returns to its idle status", regIn("d2", "cf1", 3), []ChangefeedID{"cf1", "cf2"}},
			{"cf2 empties, cf1 is no longer idle", rem("c1", "dA"), []ChangefeedID{"cf1"}},
		},
	}
	for name, steps := range scenarios {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			for _, st := range steps {
				require.NoError(t, h.do(st.req), st.name)
				b, _ := h.broker("c1")
				require.Equal(t, st.want, b.Changefeeds, st.name)
				// Memory stays bounded: besides the changefeeds with
				// dispatchers, the broker keeps at most the one idle status.
				bk := h.svc.byClusterForTest("c1")
				require.LessOrEqual(t, len(bk.changefeeds), len(st.want)+1, st.name)
				h.checkQuiescent()
			}
		})
	}
}

// A broker keeps at most maxFree released dispatchers for reuse, however
// many it releases at once.
func TestReleasedDispatchersKeptForReuseAreBounded(t *testing.T) {
	h := newHarness(t)
	n := maxFree + 6
	for i := range n {
		require.NoError(t, h.do(reg(DispatcherID(fmt.Sprintf("d%03d", i)), TableID(i+1))))
	}
	for i := range n {
		require.NoError(t, h.do(rem("c1", DispatcherID(fmt.Sprintf("d%03d", i)))))
	}
	b := h.svc.byClusterForTest("c1")
	if b.offLoop {
		t.Skip("a broker with a remover outside the loop reuses nothing")
	}
	require.Len(t, b.free, maxFree)
	h.checkQuiescent()
}

// R7 at the limit: a dispatcher silent for exactly the inactivity timeout
// is kept; one tick longer, it is cleaned up.
func TestInactiveOnlyAfterTheTimeout(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.InactivityTimeout = time.Minute })
	require.NoError(t, h.do(reg("d1", 1)))
	require.NoError(t, h.do(reset("c1", "d1", 1, 100)))
	h.advance(time.Minute)
	n, err := h.svc.Cleanup(context.Background())
	require.NoError(t, err)
	require.Zero(t, n, "silent for exactly the timeout")
	h.advance(time.Nanosecond)
	n, err = h.svc.Cleanup(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, n, "silent for longer than the timeout")
	h.checkQuiescent()
}

// A zero or negative InactivityTimeout means the default, an hour: a
// dispatcher silent for less is kept, one silent for longer is not.
func TestZeroInactivityTimeoutIsTheDefault(t *testing.T) {
	for _, timeout := range []time.Duration{0, -time.Second} {
		h := newHarness(t, func(c *Config) { c.InactivityTimeout = timeout })
		require.NoError(t, h.do(reg("d1", 1)))
		require.NoError(t, h.do(reset("c1", "d1", 1, 100)))
		h.advance(DefaultInactivityTimeout)
		n, err := h.svc.Cleanup(context.Background())
		require.NoError(t, err)
		require.Zero(t, n, "timeout %v: silent for the default timeout", timeout)
		h.advance(time.Nanosecond)
		n, err = h.svc.Cleanup(context.Background())
		require.NoError(t, err)
		require.Equal(t, 1, n, "timeout %v: silent for longer than the default", timeout)
	}
}

// TestObserveIsAnUntracedSample: Observe (the gRPC Status call) answers
// what Sample answers and closes admission as Sample does once the node
// is STOPPING (the close traced), but writes no report line: the
// model's one sample is the node's reporter's.
func TestObserveIsAnUntracedSample(t *testing.T) {
	var lines trace.Lines
	h := newHarness(t, func(c *Config) { c.Tracer = &lines })
	require.NoError(t, h.do(reg("d1", 1)))
	before := len(lines.All())
	n, closed := h.svc.Observe()
	require.Equal(t, int64(1), n)
	require.False(t, closed)
	require.Len(t, lines.All(), before, "an observer's sample is not a report")
	sn, sclosed := h.svc.Sample()
	require.Equal(t, n, sn)
	require.Equal(t, closed, sclosed)
	require.Greater(t, len(lines.All()), before, "the reporter's sample is traced")
	h.stopping.Store(true)
	before = len(lines.All())
	_, closed = h.svc.Observe()
	require.True(t, closed, "Observe closes admission once STOPPING, as Sample does")
	var acts []string
	for _, l := range lines.All()[before:] {
		acts = append(acts, l.Action.String())
	}
	require.Contains(t, acts, "ServiceStartClose")
	require.NotContains(t, acts, "ServiceStartReport")
	require.NotContains(t, acts, "ServiceReadBroker")
}

// The errors of requests queued by Submit go to Config.OnError, each with
// its request; a request that succeeds reports nothing there.
func TestSubmitErrorsGoToOnError(t *testing.T) {
	type failure struct {
		req Request
		err error
	}
	var mu sync.Mutex
	var got []failure
	h := newHarness(t, func(c *Config) {
		c.OnError = func(r Request, err error) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, failure{r, err})
		}
	})
	bg := context.Background()
	unknown := reset("c1", "nobody", 1, 200)
	require.NoError(t, h.svc.Submit(bg, reg("d1", 1)))
	require.NoError(t, h.svc.Submit(bg, unknown))
	require.NoError(t, h.svc.Submit(bg, rem("c1", "d1")))
	h.snapshot() // runs after the submitted requests (FIFO)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 1, "only the failed request is reported")
	require.Equal(t, unknown, got[0].req)
	require.ErrorIs(t, got[0].err, ErrUnknownDispatcher)
}

// Notify calls of one dispatcher run side by side on the event store's
// goroutines: a call that arrives while another is reading the
// dispatcher acts too (a reader does not make the dispatcher look
// released), and the removal still marks it removed once the reader
// is done.
func TestNotifyBesideAnotherReaderActs(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.do(reg("d1", 1)))
	d := h.svc.byClusterForTest("c1").lookup("d1")
	h.takeEvents()
	d.nstate.Add(1) // another Notify is reading d
	require.True(t, h.eventStore("c1").Notify("d1"))
	require.Equal(t, []Event{{Kind: EventReady, Cluster: "c1", Dispatcher: "d1"}}, h.takeEvents())
	require.Zero(t, h.svc.DroppedNotifications())

	removed := make(chan struct{})
	go func() { d.markRemoved(); close(removed) }()
	d.nstate.Add(-1) // the reader is done
	<-removed
	require.True(t, d.isRemoved(), "R4: marked removed after its reader left")
	d.Notify(d.gen)
	require.Empty(t, h.takeEvents(), "R4: no event once removed")
}

// A publish that finds its ID already published (the loop never lets it
// happen: a repeated registration releases the old one first) counts the
// dispatcher once: the admission's early count already covers the new
// entry, so the replaced one gives its share back (R1).
func TestAddOverAPublishedEntryCountsOnce(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.do(trig("c1", "t1")))
	req := trig("c1", "t1")
	_, err := call(context.Background(), h.svc, func(ctx context.Context) (struct{}, error) {
		b := h.svc.broker("c1")
		if !h.svc.admit(b) {
			return struct{}{}, ErrAdmissionClosed
		}
		d := b.newDispatcher(&req)
		b.lookupAndJoin(d) // the old entry is left published
		return struct{}{}, b.add(ctx, nil, d, &req)
	})
	require.NoError(t, err)
	require.Equal(t, int64(1), h.count(), "R1: one published ID, counted once")
	h.checkQuiescent()
}

// A bad request's error says what is wrong with it: the action, the
// dispatcher, the cluster, the changefeed, the table or the epoch. A
// request without an action (the zero Action) is bad, whatever else it
// names.
func TestBadRequestSaysWhatIsWrong(t *testing.T) {
	h := newHarness(t)
	ok := reg("d1", 1)
	for want, change := range map[string]func(*Request){
		"action Action(0)":         func(r *Request) { r.Action = 0 },
		"action Action(4)":         func(r *Request) { r.Action = Reset + 1 },
		"empty dispatcher ID":      func(r *Request) { r.Dispatcher = "" },
		"empty cluster ID":         func(r *Request) { r.Cluster = "" },
		"empty changefeed ID":      func(r *Request) { r.Changefeed = "" },
		"table 0 (want ≥ 1":        func(r *Request) { r.Table = 0 },
		"RESET needs an epoch ≥ 1": func(r *Request) { r.Action = Reset },
	} {
		bad := ok
		change(&bad)
		err := h.do(bad)
		require.ErrorIs(t, err, ErrBadRequest, want)
		require.ErrorContains(t, err, want)
	}
	require.ErrorIs(t, h.do(Request{Cluster: "c1", Dispatcher: "d1"}), ErrBadRequest, "no action")
	require.Empty(t, h.snapshot().Brokers)
}

// The zero Action and the zero EventKind name nothing: a request or an
// event left zero is none of the actions or kinds.
func TestZeroActionAndKindNameNothing(t *testing.T) {
	require.Equal(t, "Action(0)", Action(0).String())
	require.Equal(t, "EventKind(0)", EventKind(0).String())
	require.Equal(t, []string{"REGISTER", "REMOVE", "RESET"}, []string{Register.String(), Remove.String(), Reset.String()})
	require.Equal(t, []string{"Ready", "NotReusable", "Handshake"},
		[]string{EventReady.String(), EventNotReusable.String(), EventHandshake.String()})
}
