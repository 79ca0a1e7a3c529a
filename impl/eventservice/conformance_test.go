package eventservice

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
	"github.com/drainproof/drainproof/spec"
)

// The conformance test drives the implementation and the model (package
// spec, the transcription of tla/DrainRegistration.tla, with Bugs = {} and
// Brokers = {b1, b2}) side by side. The service has two upstream clusters,
// c1 and c2: cluster ci is the model's broker bi. Each rapid step draws a
// registration-side action, applies it to the service and the model's steps
// it performs, in the implementation's order, then compares the observable
// state (each broker's count and gate bit, their sum, the service's closing
// and closed flags, each cluster's published set, subscriptions and schema
// references) and checks the model's invariants and action properties.
// With a bug of the zoo switched on, the implementation leaves the model
// and the test fails.
//
// The mapping, implementation -> spec (d at cluster ci is broker bi):
//
//	REGISTER d to ci sent      CollectorSendRegister(d, bi) (the request waits in flight)
//	REGISTER d to ci lost      NetLoseRegister(d, bi)
//	Do(REGISTER d to ci)       ServiceRecvRegister(d, bi) (sent first if not in flight), then
//	  ... gate check refuses     nothing more, or, when it finds T STOPPING, the rest of the close:
//	                             ServiceCloseBroker(b) for every broker, ServiceFinishClose
//	  ... admitted               BrokerAdmit(d), and for a re-registration BrokerReleaseOld(d), then
//	  ... table trigger          nothing more
//	  ... ok                     BrokerSubscribe(d), BrokerRegisterTable(d)
//	  ... store refuses          BrokerSubscribeRefused(d), BrokerRollback(d)
//	  ... RegisterTable fails    BrokerSubscribe(d), BrokerRegisterTableFails(d), BrokerUnsubscribe(d), BrokerRollback(d)
//	  ... blocked, released      BrokerSubscribe(d) | BrokerRegisterTable(d) or the three failure steps
//	  ... fails, rollback held   BrokerSubscribe(d), BrokerRegisterTableFails(d) | BrokerUnsubscribe(d), BrokerRollback(d)
//	Do(REMOVE d at ci)         CollectorRemove(d), BrokerRemoveFinish(d) (ordinary only) if d is
//	                           registered at bi; nothing otherwise
//	  ... blocked, released      CollectorRemove(d) | BrokerRemoveFinish(d)
//	inactivity cleanup         CollectorRemove(d), BrokerRemoveFinish(d) per eligible d (in-loop cleanup)
//	Sample()                   NodeStartHeartbeat, [ServiceStartClose, ServiceCloseBroker(b)...,
//	                           ServiceFinishClose when T is STOPPING and admission open],
//	                           ServiceStartReport, ServiceReadBroker(b1), ServiceReadBroker(b2),
//	                           NodeSendHeartbeat; the heartbeat's (count, closed) = Sample()
//	node goes DRAINING/STOPPING  liveness' = Succ(liveness) (environment: the node's liveness;
//	                           work' = 0 with STOPPING, as the coordinator asks for STOPPING only then)
//	RESET d                    nothing (the model has no stat epochs); the count must not change
//
// Environment bookkeeping outside the model's actions: the REGISTER budget
// (registrations) is refilled before each send, and the heartbeat a report
// puts on the network is dropped (NetLose) so that the network stays empty.
// A REGISTER of d to a cluster other than the one d is registered with is
// outside the model (a dispatcher belongs to one upstream cluster): the
// test does not send it.

var (
	confDispatchers = []string{"d1", "d2", "d3"} // d3 is a table trigger
	confBrokers     = []string{"b1", "b2"}
	confClusters    = []ClusterID{"c1", "c2"} // cluster confClusters[b] is broker b
)

// heldKind is the store call a blocked request waits in.
type heldKind int8

const (
	heldRegister heldKind = iota // SchemaStore.RegisterTable: pc "subscribed"
	heldRollback                 // EventStore.UnregisterDispatcher of a failed add: pc "failed"
	heldRemove                   // EventStore.UnregisterDispatcher of a removal: pc "removing"
)

type conformance struct {
	h     *harness
	m     *spec.Model
	s     spec.State
	epoch map[int]uint64 // the implementation-side epoch of registered d

	// A request blocked in a store call, if inflight >= 0: a registration
	// in RegisterTable (held = heldRegister), a failed registration's
	// rollback in UnregisterDispatcher (heldRollback), or a removal in
	// UnregisterDispatcher (heldRemove), of dispatcher inflight at broker
	// inflightB.
	inflight  int
	inflightB int
	held      heldKind
	gate      *storetest.Hold
	errc      chan error
}

func (c *conformance) id(d int) DispatcherID          { return DispatcherID(confDispatchers[d]) }
func (c *conformance) table(d int) TableID            { return TableID(d + 1) }
func (c *conformance) isTrigger(d int) bool           { return d == 2 }
func (c *conformance) es(b int) *storetest.EventStore { return c.h.eventStore(confClusters[b]) }
func (c *conformance) ss(b int) *storetest.MemSchemaStore {
	return c.h.schemaStore(confClusters[b])
}

func (c *conformance) request(d, b int) Request {
	if c.isTrigger(d) {
		return trig(confClusters[b], c.id(d))
	}
	r := reg(c.id(d), c.table(d))
	r.Cluster = confClusters[b]
	return r
}

// broker returns the implementation's broker of model broker b, read
// without the request loop (the broker list is copy-on-write), or nil.
func (c *conformance) broker(b int) *broker {
	for _, br := range *c.h.svc.brokers.Load() {
		if br.cluster == confClusters[b] {
			return br
		}
	}
	return nil
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

// stepD is step for an action of dispatcher d.
func (c *conformance) stepD(t *rapid.T, name string, d int, act func(*spec.Model, *spec.State, int) (spec.State, bool)) {
	t.Helper()
	c.step(t, fmt.Sprintf("%s(%s)", name, confDispatchers[d]), func(s *spec.State) (spec.State, bool) { return act(c.m, s, d) })
}

func (c *conformance) checkActionProperties(t *rapid.T, name string, from, to spec.State) {
	t.Helper()
	for i, p := range c.m.ActionProperties() {
		if !c.m.ActionHolds(i, name, from, to) {
			t.Fatalf("spec action property %s violated by %s", p, name)
		}
	}
}

// regBit is the bit of REGISTER(d) to broker b in spec.State.Regs.
func regBit(d, b int) uint32 { return 1 << (d*spec.MaxBrokers + b) }

// send is CollectorSendRegister(d, b), refilling the REGISTER budget.
func (c *conformance) send(t *rapid.T, d, b int) {
	c.s.Registrations = 0
	c.step(t, fmt.Sprintf("CollectorSendRegister(%s, %s)", confDispatchers[d], confBrokers[b]),
		func(s *spec.State) (spec.State, bool) { return c.m.CollectorSendRegister(s, d, b) })
}

// closeRest is the rest of a close of admission the implementation runs
// to its end in one call (Service.CloseAdmission) once it started:
// ServiceCloseBroker for every broker still open, then ServiceFinishClose.
func (c *conformance) closeRest(t *rapid.T) {
	if !c.s.Closing {
		return
	}
	for b := range confBrokers {
		if c.s.GateClosed&(1<<b) == 0 {
			c.step(t, "ServiceCloseBroker("+confBrokers[b]+")", func(s *spec.State) (spec.State, bool) { return c.m.ServiceCloseBroker(s, b) })
		}
	}
	if !c.s.AdmissionClosed {
		c.step(t, "ServiceFinishClose", c.m.ServiceFinishClose)
	}
}

func (c *conformance) specRemove(t *rapid.T, d int) {
	c.stepD(t, "CollectorRemove", d, (*spec.Model).CollectorRemove)
	if !c.isTrigger(d) {
		c.stepD(t, "BrokerRemoveFinish", d, (*spec.Model).BrokerRemoveFinish)
	}
	delete(c.epoch, d)
}

// specFail is the failure of RegisterTable and the step-wise rollback.
func (c *conformance) specFail(t *rapid.T, d int) {
	c.stepD(t, "BrokerRegisterTableFails", d, (*spec.Model).BrokerRegisterTableFails)
	c.stepD(t, "BrokerUnsubscribe", d, (*spec.Model).BrokerUnsubscribe)
	c.stepD(t, "BrokerRollback", d, (*spec.Model).BrokerRollback)
}

// receivable reports whether the model's service may take REGISTER(d) to
// broker b now (ServiceRecvRegister's guard, but for the request in
// flight): the loop is idle and d is idle or registered at b.
func (c *conformance) receivable(d, b int) bool {
	if c.inflight >= 0 {
		return false
	}
	p := c.s.Pc[d]
	return p == spec.PcIdle || (p == spec.PcRegistered && int(c.s.Brk[d]) == b)
}

// register delivers REGISTER(d) to broker b (sending it first if it is
// not in flight). outcome is "ok", "refused", "fails" or "block".
func (c *conformance) register(t *rapid.T, d, b int, outcome string) {
	if c.s.Regs&regBit(d, b) == 0 {
		c.send(t, d, b)
	}
	c.step(t, fmt.Sprintf("ServiceRecvRegister(%s, %s)", confDispatchers[d], confBrokers[b]),
		func(s *spec.State) (spec.State, bool) { return c.m.ServiceRecvRegister(s, d, b) })
	if p := c.s.Pc[d]; p != spec.PcGated && p != spec.PcRegated {
		c.closeRest(t)
		if err := c.h.do(c.request(d, b)); !errors.Is(err, ErrAdmissionClosed) {
			t.Fatalf("REGISTER %s with the gate check closed: %v, want ErrAdmissionClosed", c.id(d), err)
		}
		return
	}
	c.stepD(t, "BrokerAdmit", d, (*spec.Model).BrokerAdmit)
	if c.s.Pc[d] == spec.PcReplacing {
		c.stepD(t, "BrokerReleaseOld", d, (*spec.Model).BrokerReleaseOld)
		delete(c.epoch, d)
		if outcome == "failHeld" {
			// The old registration's release would be held instead.
			outcome = "fails"
		}
	}
	switch c.s.Pc[d] {
	case spec.PcRegistered: // a table trigger
		if err := c.h.do(c.request(d, b)); err != nil {
			t.Fatalf("REGISTER %s: %v", c.id(d), err)
		}
		c.epoch[d] = 0
		return
	case spec.PcAdmitted:
	default:
		t.Fatalf("REGISTER %s admitted but pc %v: %v", c.id(d), c.s.Pc[d], c.m.Vars(c.s))
	}
	switch outcome {
	case "refused":
		c.es(b).Refuse(func(DispatcherID, store.Subscription) bool { return true })
		err := c.h.do(c.request(d, b))
		c.es(b).Refuse(nil)
		if !errors.Is(err, ErrNotReusable) {
			t.Fatalf("refused REGISTER %s: %v", c.id(d), err)
		}
		c.stepD(t, "BrokerSubscribeRefused", d, (*spec.Model).BrokerSubscribeRefused)
		c.stepD(t, "BrokerRollback", d, (*spec.Model).BrokerRollback)
		return
	case "fails":
		c.ss(b).FailOnce(nil)
		if err := c.h.do(c.request(d, b)); !errors.Is(err, storetest.ErrInjected) {
			t.Fatalf("failing REGISTER %s: %v", c.id(d), err)
		}
		c.stepD(t, "BrokerSubscribe", d, (*spec.Model).BrokerSubscribe)
		c.specFail(t, d)
		return
	case "failHeld":
		// RegisterTable fails and the rollback is held inside
		// EventStore.UnregisterDispatcher: d is marked removed, still
		// subscribed and still counted (the rollback's order: mark,
		// release the stores, then the count).
		c.ss(b).FailOnce(nil)
		c.gate = c.es(b).BlockUnregister()
		c.inflight, c.inflightB, c.held, c.errc = d, b, heldRollback, make(chan error, 1)
		req := c.request(d, b)
		go func() { c.errc <- c.h.do(req) }()
		select {
		case <-c.gate.Entered():
		case err := <-c.errc:
			c.gate, c.inflight = nil, -1
			t.Fatalf("failing REGISTER %s returned (%v) without releasing its subscription", c.id(d), err)
		}
		c.es(b).Unblock()
		c.stepD(t, "BrokerSubscribe", d, (*spec.Model).BrokerSubscribe)
		c.stepD(t, "BrokerRegisterTableFails", d, (*spec.Model).BrokerRegisterTableFails)
		return
	case "block":
		c.gate = c.ss(b).BlockRegisterTable()
		c.inflight, c.inflightB, c.held, c.errc = d, b, heldRegister, make(chan error, 1)
		req := c.request(d, b)
		go func() { c.errc <- c.h.do(req) }()
		<-c.gate.Entered()
		c.ss(b).Unblock()
		c.stepD(t, "BrokerSubscribe", d, (*spec.Model).BrokerSubscribe)
		return
	}
	if err := c.h.do(c.request(d, b)); err != nil {
		t.Fatalf("REGISTER %s: %v", c.id(d), err)
	}
	c.stepD(t, "BrokerSubscribe", d, (*spec.Model).BrokerSubscribe)
	c.stepD(t, "BrokerRegisterTable", d, (*spec.Model).BrokerRegisterTable)
	c.epoch[d] = 0
}

// removeBlocked starts a removal of registered ordinary d that blocks in
// EventStore.UnregisterDispatcher: the model's d is "removing".
func (c *conformance) removeBlocked(t *rapid.T, d int) {
	b := int(c.s.Brk[d])
	c.stepD(t, "CollectorRemove", d, (*spec.Model).CollectorRemove)
	delete(c.epoch, d)
	c.gate = c.es(b).BlockUnregister()
	c.inflight, c.inflightB, c.held, c.errc = d, b, heldRemove, make(chan error, 1)
	req := rem(confClusters[b], c.id(d))
	go func() { c.errc <- c.h.do(req) }()
	<-c.gate.Entered()
	c.es(b).Unblock()
}

// release lets the blocked registration go on, to success or failure, or
// the blocked removal finish.
func (c *conformance) release(t *rapid.T, fail bool) {
	d, b := c.inflight, c.inflightB
	switch c.held {
	case heldRemove:
		c.gate.Release()
		err := <-c.errc
		c.inflight, c.gate = -1, nil
		if err != nil {
			t.Fatalf("released REMOVE %s: %v", c.id(d), err)
		}
		c.stepD(t, "BrokerRemoveFinish", d, (*spec.Model).BrokerRemoveFinish)
		return
	case heldRollback:
		c.gate.Release()
		err := <-c.errc
		c.inflight, c.gate = -1, nil
		if !errors.Is(err, storetest.ErrInjected) {
			t.Fatalf("released failing REGISTER %s: %v", c.id(d), err)
		}
		c.stepD(t, "BrokerUnsubscribe", d, (*spec.Model).BrokerUnsubscribe)
		c.stepD(t, "BrokerRollback", d, (*spec.Model).BrokerRollback)
		return
	}
	if fail {
		c.ss(b).FailOnce(nil)
	}
	c.gate.Release()
	err := <-c.errc
	c.ss(b).Heal()
	c.inflight, c.gate = -1, nil
	if fail {
		if !errors.Is(err, storetest.ErrInjected) {
			t.Fatalf("released failing REGISTER %s: %v", c.id(d), err)
		}
		c.specFail(t, d)
		return
	}
	if err != nil {
		t.Fatalf("released REGISTER %s: %v", c.id(d), err)
	}
	c.stepD(t, "BrokerRegisterTable", d, (*spec.Model).BrokerRegisterTable)
	c.epoch[d] = 0
}

// report compares Sample with the heartbeat the model's node sends after
// sampling the brokers one by one.
func (c *conformance) report(t *rapid.T) {
	n, closed := c.h.svc.Sample()
	c.startSample(t)
	for b := range confBrokers {
		c.step(t, "ServiceReadBroker("+confBrokers[b]+")", func(s *spec.State) (spec.State, bool) { return c.m.ServiceReadBroker(s, b) })
	}
	c.sendSample(t, n, closed)
}

// startSample is the model's heartbeat up to the reads: NodeStartHeartbeat,
// the close when T is STOPPING and admission open, ServiceStartReport.
func (c *conformance) startSample(t *rapid.T) {
	c.step(t, "NodeStartHeartbeat", c.m.NodeStartHeartbeat)
	if c.s.Liveness == spec.Stopping && !c.s.AdmissionClosed {
		if !c.s.Closing {
			c.step(t, "ServiceStartClose", c.m.ServiceStartClose)
		}
		c.closeRest(t)
	}
	c.step(t, "ServiceStartReport", c.m.ServiceStartReport)
}

// sendSample is the model's NodeSendHeartbeat after the reads; the
// heartbeat must carry Sample's (n, closed). The heartbeat is then lost.
func (c *conformance) sendSample(t *rapid.T, n int64, closed bool) {
	c.step(t, "NodeSendHeartbeat", c.m.NodeSendHeartbeat)
	msgs := c.m.NetMsgs(c.s)
	if len(msgs) != 1 {
		t.Fatalf("spec heartbeat not on the network: %v", msgs)
	}
	hb := msgs[0]
	if int64(hb.Count) != n || hb.Closed != closed {
		t.Fatalf("Sample() = (%d, %v), spec heartbeat %v", n, closed, hb)
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
	var total int64
	for b := range confBrokers {
		var count int64
		var gateBit bool
		if br := c.broker(b); br != nil {
			w := br.countGate.Load()
			count, gateBit = w>>1, w&gateClosed != 0
			if want := c.s.GateClosed&(1<<b) != 0; gateBit != want {
				t.Fatalf("broker %s gate bit %v, spec gateClosed %v", confClusters[b], gateBit, want)
			}
		}
		if want := int64(c.s.Count[b]); count != want {
			t.Fatalf("broker %s count %d, spec count[%s] %d (%v)", confClusters[b], count, confBrokers[b], want, c.m.Vars(c.s))
		}
		total += count
	}
	if got := c.h.svc.sumCounts(); got != total {
		t.Fatalf("sum of the counts %d, brokers' counts add up to %d", got, total)
	}
	if got := c.h.svc.closing.Load(); got != c.s.Closing {
		t.Fatalf("closing %v, spec %v", got, c.s.Closing)
	}
	if got := c.h.svc.AdmissionClosed(); got != c.s.AdmissionClosed {
		t.Fatalf("admission closed %v, spec %v", got, c.s.AdmissionClosed)
	}
	for d := range confDispatchers {
		for b := range confBrokers {
			at := int(c.s.Brk[d]) == b
			sub := at && c.s.Subscribed&(1<<d) != 0
			ref := at && c.s.SchemaRef&(1<<d) != 0
			if got := c.es(b).Subscribed(c.id(d)); got != sub {
				t.Fatalf("%s subscribed at %s %v, spec %v", c.id(d), confClusters[b], got, sub)
			}
			if got, want := c.ss(b).Refs(c.table(d)), map[bool]int{false: 0, true: 1}[ref]; got != want {
				t.Fatalf("%s schema references at %s %d, spec %d", c.id(d), confClusters[b], got, want)
			}
		}
	}
	if c.inflight >= 0 {
		return // the loop is busy: the registered sets are compared later
	}
	snap := c.h.snapshot()
	for b := range confBrokers {
		var published []DispatcherID
		for _, bs := range snap.Brokers {
			if bs.Cluster == confClusters[b] {
				published = ids(bs)
			}
		}
		var want []DispatcherID
		for d := range confDispatchers {
			if c.s.Pc[d] == spec.PcRegistered && int(c.s.Brk[d]) == b {
				want = append(want, c.id(d))
			}
		}
		if !slices.Equal(published, want) {
			t.Fatalf("registered at %s %v, spec %v", confClusters[b], published, want)
		}
	}
	c.h.checkQuiescent()
}

// R1–R9 against the model (spec as oracle), with two clusters.
func TestConformance(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m, err := spec.New(spec.Config{
			Dispatchers:   confDispatchers,
			TableTriggers: []string{"d3"},
			Brokers:       confBrokers,
			Versions:      []string{"new"},
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
		brokerGen := rapid.IntRange(0, len(confBrokers)-1)
		idle := func() bool { return c.inflight < 0 }
		// home is the broker a REGISTER of d may go to: d's own once it
		// has one, any otherwise.
		home := func(t *rapid.T, d int) int {
			if b := c.s.Brk[d]; b != spec.NoBroker {
				return int(b)
			}
			return brokerGen.Draw(t, "b")
		}
		t.Repeat(map[string]func(*rapid.T){
			"send": func(t *rapid.T) {
				d := dispatcher.Draw(t, "d")
				b := home(t, d)
				if c.s.Regs&regBit(d, b) != 0 {
					t.Skip("already in flight")
				}
				c.send(t, d, b)
			},
			"lose": func(t *rapid.T) {
				d, b := dispatcher.Draw(t, "d"), brokerGen.Draw(t, "b")
				if c.s.Regs&regBit(d, b) == 0 {
					t.Skip("not in flight")
				}
				c.step(t, "NetLoseRegister", func(s *spec.State) (spec.State, bool) { return c.m.NetLoseRegister(s, d, b) })
			},
			"register": func(t *rapid.T) {
				d := dispatcher.Draw(t, "d")
				b := home(t, d)
				if !c.receivable(d, b) {
					t.Skip("loop busy")
				}
				c.register(t, d, b, rapid.SampledFrom([]string{"ok", "ok", "refused", "fails", "failHeld", "block"}).Draw(t, "outcome"))
			},
			"remove": func(t *rapid.T) {
				if !idle() {
					t.Skip("loop busy")
				}
				d, b := dispatcher.Draw(t, "d"), brokerGen.Draw(t, "b")
				if c.s.Pc[d] == spec.PcRegistered && int(c.s.Brk[d]) == b {
					c.specRemove(t, d)
				}
				if err := c.h.do(rem(confClusters[b], c.id(d))); err != nil {
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
				d, b := dispatcher.Draw(t, "d"), brokerGen.Draw(t, "b")
				err := c.h.do(reset(confClusters[b], c.id(d), c.epoch[d]+1, 100))
				if _, ok := c.epoch[d]; ok && int(c.s.Brk[d]) == b {
					if err != nil {
						t.Fatal(err)
					}
					c.epoch[d]++
				} else if !errors.Is(err, ErrUnknownDispatcher) {
					t.Fatalf("RESET of %s, not registered at %s: %v", c.id(d), confClusters[b], err)
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
			"report":         func(t *rapid.T) { c.report(t) },
			"reportByBroker": func(t *rapid.T) { c.reportByBroker(t) },
			"closeByBroker":  func(t *rapid.T) { c.closeByBroker(t) },
			"liveness": func(t *rapid.T) {
				if c.s.Liveness == spec.Stopping {
					t.Skip("already STOPPING")
				}
				from := c.s
				c.s.Liveness = c.s.Liveness.Succ()
				if c.s.Liveness == spec.Stopping {
					c.s.Work = 0 // the maintainers moved their work first (StopAfterWorkMoved)
				}
				c.checkActionProperties(t, "NodeLivenessStep", from, c.s)
				if c.s.Liveness == spec.Stopping {
					c.h.stopping.Store(true)
				}
			},
			"notify": func(t *rapid.T) {
				d, b := dispatcher.Draw(t, "d"), brokerGen.Draw(t, "b")
				c.h.takeEvents()
				delivered := c.es(b).Notify(c.id(d))
				if want := c.s.Subscribed&(1<<d) != 0 && int(c.s.Brk[d]) == b; delivered != want {
					t.Fatalf("notify %s at %s delivered %v, spec subscribed there %v", c.id(d), confClusters[b], delivered, want)
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
