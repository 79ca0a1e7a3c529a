package eventservice

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/spec"
)

// The conformance test drives the implementation and the model (package
// spec, the transcription of tla/DrainRegistration.tla, with Bugs = {}) side
// by side. Each rapid step draws a registration-side action, applies it to
// the service and the matching sequence of spec actions, then compares the
// observable state (count, admission, registered set, subscriptions,
// schema references) and checks the spec's invariants and action
// properties. With a bug of the zoo switched on, the implementation leaves
// the model and the test fails.
//
// The mapping, implementation -> spec:
//
//	register ordinary d       CollectorRegister(d), BrokerSubscribe(d), BrokerRegisterTable(d)
//	  ... store refuses        CollectorRegister(d), BrokerSubscribeRefused(d)
//	  ... RegisterTable fails  CollectorRegister(d), BrokerSubscribe(d), BrokerRegisterTableFails(d)
//	  ... blocked, released    CollectorRegister(d), BrokerSubscribe(d) | BrokerRegisterTable(d) or ...Fails(d)
//	  ... d already registered CollectorRemove(d), BrokerRemoveFinish(d) first (replacement, F-R3)
//	  ... admission closed     CollectorRegister(d) (closes admission, drops the request)
//	register table trigger d  CollectorRegister(d)
//	remove d                  CollectorRemove(d), BrokerRemoveFinish(d) (ordinary only)
//	  ... blocked, released    CollectorRemove(d) | BrokerRemoveFinish(d)
//	inactivity cleanup        CollectorRemove(d), BrokerRemoveFinish(d) per eligible d (in-loop cleanup)
//	report                    NodeSendHeartbeat; its heartbeat's (count, closed) = Report()
//	node goes DRAINING/STOPPING  liveness' = Succ(liveness) (environment: the node's liveness)
//	reset d                   nothing (the model has no stat epochs); the count must not change
//
// The dispatchers belong to two upstream clusters (d1 and the table
// trigger d3 to c1, d2 to c2), so the service runs two brokers, each with
// its own stores, and the model's count is the sum of theirs.
//
// Environment bookkeeping outside the model's actions: the REGISTER budget
// (registrations) is refilled, and the heartbeat a report puts on the
// network is dropped (NetLose) so that the network stays empty.

var confDispatchers = []string{"d1", "d2", "d3"} // d3 is a table trigger

type conformance struct {
	h     *harness
	m     *spec.Model
	s     spec.State
	epoch map[int]uint64 // the implementation-side epoch of registered d

	// A registration blocked in RegisterTable, or (removing) a removal
	// blocked in UnregisterDispatcher, if inflight >= 0.
	inflight int
	removing bool
	gate     *store.Gate
	errc     chan error
}

func (c *conformance) id(d int) DispatcherID { return DispatcherID(confDispatchers[d]) }
func (c *conformance) table(d int) TableID   { return TableID(d + 1) }
func (c *conformance) isTrigger(d int) bool  { return d == 2 }

// cluster is d's upstream cluster: d1 and d3 are c1's, d2 is c2's, so
// the service has two brokers and a report sums two counts.
func (c *conformance) cluster(d int) ClusterID { return ClusterID(fmt.Sprintf("c%d", d%2+1)) }
func (c *conformance) es(d int) *store.MemEventStore {
	return c.h.eventStore(c.cluster(d))
}
func (c *conformance) ss(d int) *store.MemSchemaStore {
	return c.h.schemaStore(c.cluster(d))
}

func (c *conformance) request(d int) Request {
	if c.isTrigger(d) {
		return trig(c.cluster(d), c.id(d))
	}
	return regOn(c.cluster(d), c.id(d), c.table(d))
}

// step applies the spec action named name to the model state; it must be
// enabled, and every action property must hold on the transition.
func (c *conformance) step(t *rapid.T, name string, act func(*spec.State) (spec.State, bool)) {
	t.Helper()
	next, ok := act(&c.s)
	if !ok {
		t.Fatalf("spec action %s not enabled in %v", name, c.m.Vars(c.s))
	}
	c.checkActionProperties(t, name, c.s, next)
	c.s = next
}

func (c *conformance) checkActionProperties(t *rapid.T, name string, from, to spec.State) {
	t.Helper()
	for i, p := range c.m.ActionProperties() {
		if !c.m.ActionHolds(i, name, from, to) {
			t.Fatalf("spec action property %s violated by %s", p, name)
		}
	}
}

func (c *conformance) gateOpen() bool {
	return !c.s.AdmissionClosed && c.s.Liveness != spec.Stopping
}

// specRegister is CollectorRegister(d), refilling the REGISTER budget.
func (c *conformance) specRegister(t *rapid.T, d int) {
	c.s.Registrations = 0
	c.step(t, "CollectorRegister", func(s *spec.State) (spec.State, bool) { return c.m.CollectorRegister(s, d) })
}

func (c *conformance) specRemove(t *rapid.T, d int) {
	c.step(t, "CollectorRemove", func(s *spec.State) (spec.State, bool) { return c.m.CollectorRemove(s, d) })
	if !c.isTrigger(d) {
		c.step(t, "BrokerRemoveFinish", func(s *spec.State) (spec.State, bool) { return c.m.BrokerRemoveFinish(s, d) })
	}
	delete(c.epoch, d)
}

// register starts a registration of d. outcome is "ok", "refused",
// "fails" or "block".
func (c *conformance) register(t *rapid.T, d int, outcome string) {
	open := c.gateOpen()
	if open && c.s.Pc[d] == spec.PcRegistered {
		c.specRemove(t, d) // the implementation replaces: F-R3
	}
	c.specRegister(t, d)
	if !open {
		if err := c.h.do(c.request(d)); !errors.Is(err, ErrAdmissionClosed) {
			t.Fatalf("REGISTER %s with admission closed: %v, want ErrAdmissionClosed", c.id(d), err)
		}
		return
	}
	if c.isTrigger(d) {
		outcome = "ok"
	}
	switch outcome {
	case "refused":
		c.es(d).Refuse(func(DispatcherID, store.Subscription) bool { return true })
		err := c.h.do(c.request(d))
		c.es(d).Refuse(nil)
		if !errors.Is(err, ErrNotReusable) {
			t.Fatalf("refused REGISTER %s: %v", c.id(d), err)
		}
		c.step(t, "BrokerSubscribeRefused", func(s *spec.State) (spec.State, bool) { return c.m.BrokerSubscribeRefused(s, d) })
		return
	case "fails":
		c.ss(d).FailOnce(nil)
		if err := c.h.do(c.request(d)); !errors.Is(err, store.ErrInjected) {
			t.Fatalf("failing REGISTER %s: %v", c.id(d), err)
		}
		c.step(t, "BrokerSubscribe", func(s *spec.State) (spec.State, bool) { return c.m.BrokerSubscribe(s, d) })
		c.step(t, "BrokerRegisterTableFails", func(s *spec.State) (spec.State, bool) { return c.m.BrokerRegisterTableFails(s, d) })
		return
	case "block":
		c.gate = c.ss(d).BlockRegisterTable()
		c.inflight, c.errc = d, make(chan error, 1)
		req := c.request(d)
		go func() { c.errc <- c.h.do(req) }()
		<-c.gate.Entered()
		c.ss(d).Unblock()
		c.step(t, "BrokerSubscribe", func(s *spec.State) (spec.State, bool) { return c.m.BrokerSubscribe(s, d) })
		return
	}
	if err := c.h.do(c.request(d)); err != nil {
		t.Fatalf("REGISTER %s: %v", c.id(d), err)
	}
	if !c.isTrigger(d) {
		c.step(t, "BrokerSubscribe", func(s *spec.State) (spec.State, bool) { return c.m.BrokerSubscribe(s, d) })
		c.step(t, "BrokerRegisterTable", func(s *spec.State) (spec.State, bool) { return c.m.BrokerRegisterTable(s, d) })
	}
	c.epoch[d] = 0
}

// removeBlocked starts a removal of registered ordinary d that blocks in
// EventStore.UnregisterDispatcher: the model's d is "removing".
func (c *conformance) removeBlocked(t *rapid.T, d int) {
	c.step(t, "CollectorRemove", func(s *spec.State) (spec.State, bool) { return c.m.CollectorRemove(s, d) })
	delete(c.epoch, d)
	c.gate = c.es(d).BlockUnregister()
	c.inflight, c.removing, c.errc = d, true, make(chan error, 1)
	req := rem(c.cluster(d), c.id(d))
	go func() { c.errc <- c.h.do(req) }()
	<-c.gate.Entered()
	c.es(d).Unblock()
}

// release lets the blocked registration go on, to success or failure, or
// the blocked removal finish.
func (c *conformance) release(t *rapid.T, fail bool) {
	d := c.inflight
	if c.removing {
		c.gate.Release()
		err := <-c.errc
		c.inflight, c.gate, c.removing = -1, nil, false
		if err != nil {
			t.Fatalf("released REMOVE %s: %v", c.id(d), err)
		}
		c.step(t, "BrokerRemoveFinish", func(s *spec.State) (spec.State, bool) { return c.m.BrokerRemoveFinish(s, d) })
		return
	}
	if fail {
		c.ss(d).FailOnce(nil)
	}
	c.gate.Release()
	err := <-c.errc
	c.ss(d).Heal()
	c.inflight, c.gate = -1, nil
	if fail {
		if !errors.Is(err, store.ErrInjected) {
			t.Fatalf("released failing REGISTER %s: %v", c.id(d), err)
		}
		c.step(t, "BrokerRegisterTableFails", func(s *spec.State) (spec.State, bool) { return c.m.BrokerRegisterTableFails(s, d) })
		return
	}
	if err != nil {
		t.Fatalf("released REGISTER %s: %v", c.id(d), err)
	}
	c.step(t, "BrokerRegisterTable", func(s *spec.State) (spec.State, bool) { return c.m.BrokerRegisterTable(s, d) })
	c.epoch[d] = 0
}

// report compares Report with the heartbeat the model's node sends.
func (c *conformance) report(t *rapid.T) {
	n, closed := c.h.svc.Report()
	c.step(t, "NodeSendHeartbeat", c.m.NodeSendHeartbeat)
	msgs := c.m.NetMsgs(c.s)
	if len(msgs) != 1 {
		t.Fatalf("spec heartbeat not on the network: %v", msgs)
	}
	hb := msgs[0]
	if int64(hb.Count) != n || hb.Closed != closed {
		t.Fatalf("Report() = (%d, %v), spec heartbeat %v", n, closed, hb)
	}
	c.step(t, "NetLose", func(s *spec.State) (spec.State, bool) { return c.m.NetLose(s, s.Net[0]) })
}

// compare checks the observable state against the model and the model's
// invariants.
func (c *conformance) compare(t *rapid.T) {
	t.Helper()
	for i, name := range c.m.Invariants() {
		if !c.m.Holds(i, c.s) {
			t.Fatalf("spec invariant %s violated: %v", name, c.m.Vars(c.s))
		}
	}
	if got, want := c.h.svc.sumCounts(), int64(c.s.Count); got != want {
		t.Fatalf("count %d, spec count %d (%v)", got, want, c.m.Vars(c.s))
	}
	if got := c.h.svc.AdmissionClosed(); got != c.s.AdmissionClosed {
		t.Fatalf("admission closed %v, spec %v", got, c.s.AdmissionClosed)
	}
	for d := range confDispatchers {
		sub := c.s.Subscribed&(1<<d) != 0
		ref := c.s.SchemaRef&(1<<d) != 0
		if got := c.es(d).Subscribed(c.id(d)); got != sub {
			t.Fatalf("%s subscribed %v, spec %v", c.id(d), got, sub)
		}
		if got, want := c.ss(d).Refs(c.table(d)), map[bool]int{false: 0, true: 1}[ref]; got != want {
			t.Fatalf("%s schema references %d, spec %d", c.id(d), got, want)
		}
	}
	if c.inflight >= 0 {
		return // the loop is busy: the registered set is compared later
	}
	var published []DispatcherID
	for _, b := range c.h.snapshot().Brokers {
		published = append(published, ids(b)...)
	}
	slices.Sort(published) // the brokers' lists, one after the other
	var want []DispatcherID
	for d := range confDispatchers {
		if c.s.Pc[d] == spec.PcRegistered {
			want = append(want, c.id(d))
		}
	}
	if !slices.Equal(published, want) {
		t.Fatalf("registered %v, spec %v", published, want)
	}
	c.h.checkQuiescent()
}

// R1–R9 against the model (spec as oracle).
func TestConformance(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m, err := spec.New(spec.Config{
			Dispatchers:   confDispatchers,
			TableTriggers: []string{"d3"},
			MaxEpoch:      1,
			MaxReg:        spec.MaxRegLimit,
			MaxMsgs:       1,
			Transport:     spec.TransportHeartbeat,
		})
		if err != nil {
			t.Fatal(err)
		}
		c := &conformance{
			h:        newHarness(t, func(cfg *Config) { cfg.InactivityTimeout = time.Minute }),
			m:        m,
			s:        m.InitState(),
			epoch:    map[int]uint64{},
			inflight: -1,
		}
		t.Cleanup(func() {
			if c.gate != nil {
				c.gate.Release()
				<-c.errc
			}
		})
		dispatcher := rapid.IntRange(0, len(confDispatchers)-1)
		idle := func() bool { return c.inflight < 0 }
		t.Repeat(map[string]func(*rapid.T){
			"register": func(t *rapid.T) {
				if !idle() {
					t.Skip("loop busy")
				}
				d := dispatcher.Draw(t, "d")
				c.register(t, d, rapid.SampledFrom([]string{"ok", "ok", "refused", "fails", "block"}).Draw(t, "outcome"))
			},
			"remove": func(t *rapid.T) {
				if !idle() {
					t.Skip("loop busy")
				}
				d := dispatcher.Draw(t, "d")
				if c.s.Pc[d] == spec.PcRegistered {
					c.specRemove(t, d)
				}
				if err := c.h.do(rem(c.cluster(d), c.id(d))); err != nil {
					t.Fatal(err)
				}
			},
			"removeBlocked": func(t *rapid.T) {
				if !idle() {
					t.Skip("loop busy")
				}
				d := rapid.IntRange(0, 1).Draw(t, "d") // ordinary dispatchers
				if c.s.Pc[d] != spec.PcRegistered {
					t.Skip("not registered")
				}
				c.removeBlocked(t, d)
			},
			"reset": func(t *rapid.T) {
				if !idle() {
					t.Skip("loop busy")
				}
				d := dispatcher.Draw(t, "d")
				err := c.h.do(reset(c.cluster(d), c.id(d), c.epoch[d]+1, 100))
				if _, ok := c.epoch[d]; ok {
					if err != nil {
						t.Fatal(err)
					}
					c.epoch[d]++
				} else if !errors.Is(err, ErrUnknownDispatcher) {
					t.Fatalf("RESET of unregistered %s: %v", c.id(d), err)
				}
			},
			"cleanup": func(t *rapid.T) {
				if !idle() {
					t.Skip("loop busy")
				}
				c.h.advance(2 * time.Minute)
				var eligible []int
				for d := range confDispatchers {
					if e, ok := c.epoch[d]; ok && (e > 0 || c.h.svc.AdmissionClosed()) {
						eligible = append(eligible, d)
					}
				}
				for _, d := range eligible {
					c.specRemove(t, d)
				}
				n, err := c.h.svc.Cleanup(t.Context())
				if err != nil || n != len(eligible) {
					t.Fatalf("Cleanup = %d, %v; want %d eligible", n, err, len(eligible))
				}
			},
			"report": func(t *rapid.T) { c.report(t) },
			"liveness": func(t *rapid.T) {
				if c.s.Liveness == spec.Stopping {
					t.Skip("already STOPPING")
				}
				from := c.s
				c.s.Liveness = c.s.Liveness.Succ()
				c.checkActionProperties(t, "NodeLivenessStep", from, c.s)
				if c.s.Liveness == spec.Stopping {
					c.h.stopping.Store(true)
				}
			},
			"notify": func(t *rapid.T) {
				d := dispatcher.Draw(t, "d")
				c.h.takeEvents()
				delivered := c.es(d).Notify(c.id(d))
				if want := c.s.Subscribed&(1<<d) != 0; delivered != want {
					t.Fatalf("notify %s delivered %v, spec subscribed %v", c.id(d), delivered, want)
				}
				// R4: an event goes out only for a live (not removed) stat.
				live := c.s.Removed&(1<<d) == 0
				if ev := c.h.takeEvents(); len(ev) > 0 && !live {
					t.Fatalf("R4: events %v for removed %s", ev, c.id(d))
				}
			},
			"release": func(t *rapid.T) {
				if idle() {
					t.Skip("nothing blocked")
				}
				c.release(t, rapid.Bool().Draw(t, "fail"))
			},
			"": func(t *rapid.T) { c.compare(t) },
		})
	})
}

// String makes a conformance readable in rapid's failure output.
func (c *conformance) String() string { return fmt.Sprint(c.m.Vars(c.s)) }
