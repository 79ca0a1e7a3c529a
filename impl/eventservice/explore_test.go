package eventservice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/impl/coordinator"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/spec"
)

// This file is a controlled scheduler over the real event service: the
// points of hooks.go where the code is about to take an effect another
// goroutine observes become the scheduling points of a few threads (the
// request loop, a close, a report), and the explorer runs every
// interleaving of those points for a small scenario (or every one with at
// most a stated number of preemptions), each on a fresh service. In each
// run, at every scheduling point (every thread stopped), it checks the
// registry's invariants on the real state; at the end it validates the
// run's trace against the model (harness/tracecheck) and checks the
// quiescent invariants. Runs are deterministic: a schedule is the list of
// the threads chosen at each point, and a failure prints it.
//
// The request loop is one thread: R7 makes its requests serial, so its
// registrations and removal interleave with the close and the report,
// and with each other only by their order. The close is the node going
// STOPPING (the coordinator's STOPPING command, the node's step: one
// scheduling step, as the model's liveness step is one action) and then
// CloseAdmission; the report is the node's heartbeat (NodeStartHeartbeat,
// the service's Sample, NodeSendHeartbeat).
//
// What it catches that the rest of the package's tests did not (planted
// by hand, each found with its schedule): a close that sets a gate bit
// with Add instead of Or (a bit set twice carries into the count), an
// admission that checks the gate word and then adds instead of
// compare-and-swapping, and brokerFor reading closed instead of closing
// (a broker created during a close stays open); and, with -tags bugs,
// eight of the nine event-service zoo bugs.

// schedPoints are the points at which the explorer switches threads:
// those before an effect another thread can observe. The two left out
// (the REGISTER's entry, a broker step that leaves the count as it is)
// change nothing another thread reads.
var schedPoints = [...]bool{
	pointGateCheck: true, pointAdmit: true, pointAdmitCAS: true, pointNewBroker: true,
	pointStartClose: true, pointCloseList: true, pointCloseBroker: true, pointFinishClose: true,
	pointStartReport: true, pointReportList: true, pointReadBroker: true, pointCount: true,
	pointUnsubscribe: true, pointRelease: true,
	pointSendRegister: false, pointBrokerStep: false,
}

// exThread is one thread of a run: it starts stopped, and runs from one
// scheduling point to the next each time the scheduler resumes it.
type exThread struct {
	name   string
	run    func()
	resume chan struct{}
	at     string // where it is stopped: "start" or a point
	done   bool
	panic  any
}

// scheduler runs one schedule: exactly one thread runs at a time, so the
// hook knows the running thread without asking the goroutine.
type scheduler struct {
	threads []*exThread
	cur     int
	events  chan struct{} // the running thread stopped at a point or ended
	active  bool          // set once the scenario's setup is done
}

// hook is the service's hook (hooks.go): the running thread stops at a
// scheduling point until the scheduler resumes it.
func (s *scheduler) hook(p point, b *broker) {
	if !s.active || !schedPoints[p] {
		return
	}
	t := s.threads[s.cur]
	t.at = p.String()
	if b != nil {
		t.at += "(" + string(b.cluster) + ")"
	}
	s.events <- struct{}{}
	<-t.resume
}

// start starts every thread, stopped before its first step.
func (s *scheduler) start() {
	for _, t := range s.threads {
		t.resume = make(chan struct{})
		t.at = "start"
		go func() {
			defer func() {
				t.panic = recover()
				t.done = true
				s.events <- struct{}{}
			}()
			<-t.resume
			t.run()
		}()
	}
}

// finish lets every thread that has not ended run to its end, the
// scheduler inactive (a run that failed half-way).
func (s *scheduler) finish() {
	s.active = false
	for i, t := range s.threads {
		if !t.done {
			s.cur = i
			t.resume <- struct{}{}
			select {
			case <-s.events:
			case <-time.After(waitBound):
				panic("explorer: thread " + t.name + " did not end")
			}
		}
	}
}

// step resumes thread i and waits until it stops again or ends.
func (s *scheduler) step(i int) error {
	s.cur = i
	s.threads[i].resume <- struct{}{}
	select {
	case <-s.events:
	case <-time.After(waitBound):
		return fmt.Errorf("thread %s did not reach a point in %v (blocked outside the scheduler)", s.threads[i].name, waitBound)
	}
	if p := s.threads[i].panic; p != nil {
		return fmt.Errorf("thread %s panicked: %v", s.threads[i].name, p)
	}
	return nil
}

// decision is one choice of a run: the threads that could run, the one
// that ran the step before, and the one chosen.
type decision struct {
	enabled []int
	prev    int
	chosen  int
}

// order returns the decision's candidates, the one a schedule takes by
// default first (the thread that ran last, if it can go on: no
// preemption; else the first that can), then the others in thread order.
func (d *decision) order() []int {
	first := d.enabled[0]
	if slices.Contains(d.enabled, d.prev) {
		first = d.prev
	}
	out := []int{first}
	for _, i := range d.enabled {
		if i != first {
			out = append(out, i)
		}
	}
	return out
}

// preempts reports whether choosing c at d is a preemption: the thread
// that ran last could go on, and another is chosen.
func (d *decision) preempts(c int) bool {
	return d.prev >= 0 && c != d.prev && slices.Contains(d.enabled, d.prev)
}

// world is one run's system: the service with its stores, the node and
// the coordinator that drive it to STOPPING, the trace, and what the
// threads observed.
type world struct {
	svc   *Service
	es    map[ClusterID]*storetest.EventStore
	ss    map[ClusterID]*storetest.MemSchemaStore
	live  *node.LivenessStore
	node  *node.Node
	coord *coordinator.Coordinator
	buf   bytes.Buffer
	tw    *trace.Writer
	now   int64
	stop  func()
	sched *scheduler

	errs    []error // the request loop's outcomes, in order
	reports []sample
	// maxAfterBit[c]: set once broker c's gate bit is seen set: the count
	// then; no later count may exceed it (R8).
	maxAfterBit map[ClusterID]int64
}

// sample is a report a thread took: its (count, closed).
type sample struct {
	n      int64
	closed bool
}

const exNode node.ID = "T"

// exHeader is the trace header of every scenario: dispatchers d1..d4,
// brokers c1 and c2 (the model's Brokers are the service's clusters).
func exHeader() trace.Header {
	return trace.Header{Source: "eventservice explorer", Model: map[string]any{
		"Dispatchers": []string{"d1", "d2", "d3", "d4"}, "TableTriggers": []string{}, "Brokers": []string{"c1", "c2"},
		"Versions": []string{"new"}, "MaxEpoch": 15, "MaxReg": 15, "MaxMsgs": 8, "Transport": "heartbeat", "Bugs": []string{}}}
}

func newWorld(s *scheduler) (*world, error) {
	w := &world{es: map[ClusterID]*storetest.EventStore{}, ss: map[ClusterID]*storetest.MemSchemaStore{},
		live: new(node.LivenessStore), maxAfterBit: map[ClusterID]int64{}, sched: s}
	for _, c := range []ClusterID{"c1", "c2"} {
		w.es[c], w.ss[c] = storetest.NewMemEventStore(), storetest.NewMemSchemaStore()
	}
	var err error
	if w.tw, err = trace.NewWriter(&w.buf, exHeader()); err != nil {
		return nil, err
	}
	w.svc, err = New(Config{
		NewStores: func(c ClusterID) (store.EventStore, store.SchemaStore) { return w.es[c], w.ss[c] },
		Stopping:  func() bool { return w.live.Load() == node.Stopping },
		Now:       func() time.Time { return time.Unix(0, 0) },
		Tracer:    w.tw, // exHeader's Brokers: c1, c2
	})
	if err != nil {
		return nil, err
	}
	w.svc.hook = s.hook
	ctx, cancel := context.WithCancel(context.Background())
	wait := w.svc.Start(ctx)
	w.stop = func() { cancel(); _ = wait() }
	if w.node, err = node.New(node.Config{ID: exNode, Epoch: 1, Version: node.VersionBrokerDrain,
		Transport: node.TransportHeartbeat, Service: w.svc, Liveness: w.live, Tracer: w.tw}); err != nil {
		return nil, err
	}
	if w.coord, err = coordinator.New(coordinator.Config{Transport: node.TransportHeartbeat, Tracer: w.tw, TraceNode: exNode}); err != nil {
		return nil, err
	}
	w.coord.AddNode(exNode, 1, 0)
	w.coord.ObserveVersion(exNode, 1, node.VersionBrokerDrain)
	if _, err := w.coord.DrainNode(exNode, 0); err != nil {
		return nil, err
	}
	if err := w.command(node.Draining); err != nil {
		return nil, err
	}
	w.coord.ReportProgress(exNode, coordinator.Progress{})
	return w, nil
}

// command is one liveness step: the coordinator's command to target, the
// node's step, the coordinator's reading of the response.
func (w *world) command(target node.Liveness) error {
	w.now++
	cmd, ok := w.coord.NextCommand(w.now)
	if !ok || cmd.Target != target {
		return fmt.Errorf("the coordinator sent %v (%v), want %v", cmd.Target, ok, target)
	}
	resp, _ := w.node.RecvCommand(cmd)
	w.coord.ObserveResponse(resp, w.now)
	return nil
}

// do runs req in the request loop and notes its outcome.
func (w *world) do(req Request) { w.errs = append(w.errs, w.svc.Do(context.Background(), req)) }

// closer is the close thread: the node goes STOPPING, then closes
// admission.
func (w *world) closer() {
	if err := w.command(node.Stopping); err != nil {
		panic(err)
	}
	w.svc.CloseAdmission()
}

// reporter is the report thread: one heartbeat of the node.
func (w *world) reporter() {
	w.now++
	hb := w.node.Heartbeat(w.now)
	w.reports = append(w.reports, sample{hb.Count, hb.AdmissionClosed})
}

// check checks the registry's invariants with every thread stopped at a
// point (or ended): each broker's count covers its subscriptions and
// schema references and is never negative (R2); once admission is closed
// every broker's gate bit is set (R8), but that of a broker the loop
// has just created and is about to close (brokerFor, which admits
// nothing to it before); once a broker's gate bit is set
// its count never rises (R8, F-R7); a report that said closed counted at
// least what the brokers count now (the drain's safety).
func (w *world) check() error {
	var sum int64
	for _, b := range *w.svc.brokers.Load() {
		word := b.countGate.Load()
		n := word >> 1
		sum += n
		subs, refs := len(w.es[b.cluster].Subscribers()), w.ss[b.cluster].TotalRefs()
		if n < 0 || n < int64(subs) || n < int64(refs) {
			return fmt.Errorf("R2: broker %s counts %d while its stores hold %d subscriptions and %d schema references", b.cluster, n, subs, refs)
		}
		if w.svc.closed.Load() && word&gateClosed == 0 && !(n == 0 && w.creating(b.cluster)) {
			return fmt.Errorf("R8: admission closed, broker %s's gate bit open", b.cluster)
		}
		if m, ok := w.maxAfterBit[b.cluster]; ok && n > m {
			return fmt.Errorf("R8: broker %s's count rose to %d after its gate bit was set at %d", b.cluster, n, m)
		}
		if word&gateClosed != 0 {
			if m, ok := w.maxAfterBit[b.cluster]; !ok || n < m {
				w.maxAfterBit[b.cluster] = n
			}
		}
	}
	for _, r := range w.reports {
		if r.closed && r.n < sum {
			return fmt.Errorf("safety: a report said (count %d, closed), the brokers now count %d", r.n, sum)
		}
	}
	return nil
}

// creating reports whether the loop thread is stopped before closing
// the gate bit of broker c, which it created (brokerFor).
func (w *world) creating(c ClusterID) bool {
	for _, t := range w.sched.threads {
		if t.name == "loop" && t.at == pointCloseBroker.String()+"("+string(c)+")" {
			return true
		}
	}
	return false
}

// quiescent checks the invariants between requests once every thread has
// ended: R1 (count = published), R3/R9 (subscriptions and schema
// references are the published ordinary dispatchers').
func (w *world) quiescent() error {
	for _, b := range *w.svc.brokers.Load() {
		var pub []DispatcherID
		for id := range b.published {
			pub = append(pub, id)
		}
		slices.Sort(pub)
		if n := b.count(); n != int64(len(pub)) {
			return fmt.Errorf("R1: broker %s counts %d, publishes %v", b.cluster, n, pub)
		}
		if subs := w.es[b.cluster].Subscribers(); !slices.Equal(subs, pub) {
			return fmt.Errorf("R3: broker %s subscriptions %v, published %v", b.cluster, subs, pub)
		}
		if refs := w.ss[b.cluster].TotalRefs(); refs != len(pub) {
			return fmt.Errorf("R9: broker %s holds %d schema references, publishes %v", b.cluster, refs, pub)
		}
	}
	return nil
}

// scenario is a small concurrent scenario: setup runs before the
// exploration (no scheduling), threads are the concurrent parts, and
// outcome checks what the threads returned.
type scenario struct {
	name    string
	setup   func(*world)
	threads func(*world) []*exThread
	outcome func(*world) error
	// bound is the most preemptions a schedule may have; -1: none (every
	// interleaving).
	bound int
}

// exploration is what an explorer found.
type exploration struct {
	runs    int
	elapsed time.Duration
	fail    error
}

// explore runs every schedule of sc (within its bound), stopping at the
// first failure.
func explore(model *spec.Model, sc scenario) exploration {
	return exploreSchedules(sc.bound, func(prefix []int) ([]decision, error) { return runSchedule(model, sc, prefix) })
}

// exploreSchedules is the depth-first search over schedules: run runs
// one schedule that takes prefix's choices and then the default ones,
// and returns its decisions; every alternative of a decision past the
// prefix (within bound preemptions, -1: any) becomes a prefix to run.
// Each schedule is run once (TestExplorerEnumeratesEverySchedule).
func exploreSchedules(bound int, run func(prefix []int) ([]decision, error)) exploration {
	start := time.Now()
	var ex exploration
	stack := [][]int{nil}
	for len(stack) > 0 {
		prefix := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		decisions, err := run(prefix)
		ex.runs++
		if err != nil {
			ex.fail = fmt.Errorf("schedule %s: %w", describe(decisions), err)
			break
		}
		pre := 0
		for i := range prefix {
			if decisions[i].preempts(decisions[i].chosen) {
				pre++
			}
		}
		// The alternatives after the prefix, deepest last on the stack
		// (explored first). Past the prefix the default choices never
		// preempt, so pre stays the prefix's.
		for i := len(prefix); i < len(decisions); i++ {
			d := &decisions[i]
			ord := d.order()
			at := slices.Index(ord, d.chosen)
			for _, c := range ord[at+1:] {
				if bound < 0 || pre+b2i(d.preempts(c)) <= bound {
					next := make([]int, i+1)
					for k := range i {
						next[k] = decisions[k].chosen
					}
					next[i] = c
					stack = append(stack, next)
				}
			}
		}
	}
	ex.elapsed = time.Since(start)
	return ex
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// describe prints a schedule: the thread chosen at each step.
func describe(ds []decision) string {
	var b strings.Builder
	for i, d := range ds {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%d", d.chosen)
	}
	return "[" + b.String() + "]"
}

// runSchedule runs sc once, taking prefix's choices first and then the
// default ones, and returns the decisions taken.
func runSchedule(model *spec.Model, sc scenario, prefix []int) (ds []decision, err error) {
	s := &scheduler{events: make(chan struct{})}
	w, err := newWorld(s)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	sc.setup(w)
	s.threads = sc.threads(w)
	s.active = true
	s.start()
	defer s.finish()
	var log []string
	prev := -1
	for {
		var enabled []int
		for i, t := range s.threads {
			if !t.done {
				enabled = append(enabled, i)
			}
		}
		if len(enabled) == 0 {
			break
		}
		d := decision{enabled: enabled, prev: prev}
		d.chosen = d.order()[0]
		if k := len(ds); k < len(prefix) {
			d.chosen = prefix[k]
		}
		ds = append(ds, d)
		if err := s.step(d.chosen); err != nil {
			return ds, err
		}
		t := s.threads[d.chosen]
		if t.done {
			log = append(log, t.name+":end")
		} else {
			log = append(log, t.name+":"+t.at)
		}
		if err := w.check(); err != nil {
			return ds, fmt.Errorf("%w\n  steps: %s", err, strings.Join(log, " "))
		}
		prev = d.chosen
	}
	s.active = false
	if err := w.quiescent(); err != nil {
		return ds, fmt.Errorf("%w\n  steps: %s", err, strings.Join(log, " "))
	}
	if sc.outcome != nil {
		if err := sc.outcome(w); err != nil {
			return ds, fmt.Errorf("%w\n  steps: %s", err, strings.Join(log, " "))
		}
	}
	if err := w.tw.Close(); err != nil {
		return ds, err
	}
	res, err := tracecheck.CheckBytes(w.buf.Bytes(), "explore", model, tracecheck.Options{})
	if err != nil {
		return ds, err
	}
	if res.Verdict != tracecheck.OK {
		return ds, fmt.Errorf("trace %s at line %d: %s\n  %s\n  steps: %s\n%s", res.Verdict, res.Line, res.Reason, res.Text,
			strings.Join(log, " "), w.buf.String())
	}
	return ds, nil
}

// thread returns a thread named name that runs f.
func thread(name string, f func()) *exThread { return &exThread{name: name, run: f} }

// admittedOrClosed fails unless every outcome is nil or
// ErrAdmissionClosed (or, for a failing RegisterTable, the injected error).
func admittedOrClosed(w *world) error {
	for i, err := range w.errs {
		if err != nil && !errors.Is(err, ErrAdmissionClosed) && !errors.Is(err, storetest.ErrInjected) {
			return fmt.Errorf("request %d: %v", i, err)
		}
	}
	return nil
}

// exBound is the preemption bound of the three-thread scenarios
// (-explore.bound; the two-thread ones run every interleaving).
var exBound = 2

func init() {
	flag.IntVar(&exBound, "explore.bound", exBound, "the explorer's preemption bound for three threads (-1: every interleaving)")
}

// exScenarios are the explorer's scenarios, all over two brokers.
func exScenarios() []scenario {
	twoBrokers := func(w *world) {
		w.do(regOn("c1", "d1", 1))
		w.do(regOn("c2", "d2", 2))
		w.errs = nil
	}
	return []scenario{
		{
			// A close and a report of two brokers, with no request.
			name:  "close+report",
			setup: twoBrokers,
			threads: func(w *world) []*exThread {
				return []*exThread{thread("close", w.closer), thread("report", w.reporter)}
			},
			bound: -1,
		},
		{
			// A registration at c2 during a close of c1 and c2.
			name:  "register+close",
			setup: twoBrokers,
			threads: func(w *world) []*exThread {
				return []*exThread{thread("loop", func() { w.do(regOn("c2", "d3", 3)) }), thread("close", w.closer)}
			},
			outcome: admittedOrClosed,
			bound:   -1,
		},
		{
			// A registration at c2 whose RegisterTable fails and rolls
			// back, during a close.
			name: "failed-register+close",
			setup: func(w *world) {
				twoBrokers(w)
				w.ss["c2"].FailOnce(nil)
			},
			threads: func(w *world) []*exThread {
				return []*exThread{thread("loop", func() { w.do(regOn("c2", "d3", 3)) }), thread("close", w.closer)}
			},
			outcome: admittedOrClosed,
			bound:   -1,
		},
		{
			// A repeated registration of d2 at c2 (it replaces the
			// first: BrokerReleaseOld) during a close.
			name:  "re-register+close",
			setup: twoBrokers,
			threads: func(w *world) []*exThread {
				return []*exThread{thread("loop", func() { w.do(regOn("c2", "d2", 2)) }), thread("close", w.closer)}
			},
			outcome: admittedOrClosed,
			bound:   -1,
		},
		{
			// The registration that creates broker c2, during a close.
			name:  "new-broker+close",
			setup: func(w *world) { w.do(regOn("c1", "d1", 1)); w.errs = nil },
			threads: func(w *world) []*exThread {
				return []*exThread{thread("loop", func() { w.do(regOn("c2", "d2", 2)) }), thread("close", w.closer)}
			},
			outcome: admittedOrClosed,
			bound:   -1,
		},
		{
			// A registration at c2, a close and a report.
			name:  "register+close+report",
			setup: twoBrokers,
			threads: func(w *world) []*exThread {
				return []*exThread{thread("loop", func() { w.do(regOn("c2", "d3", 3)) }), thread("close", w.closer),
					thread("report", w.reporter)}
			},
			outcome: admittedOrClosed,
			bound:   exBound,
		},
		{
			// The failing registration, a close and a report.
			name: "failed-register+close+report",
			setup: func(w *world) {
				twoBrokers(w)
				w.ss["c2"].FailOnce(nil)
			},
			threads: func(w *world) []*exThread {
				return []*exThread{thread("loop", func() { w.do(regOn("c2", "d3", 3)) }), thread("close", w.closer),
					thread("report", w.reporter)}
			},
			outcome: admittedOrClosed,
			bound:   exBound,
		},
		{
			// The registration that creates broker c2, a close and a report.
			name:  "new-broker+close+report",
			setup: func(w *world) { w.do(regOn("c1", "d1", 1)); w.errs = nil },
			threads: func(w *world) []*exThread {
				return []*exThread{thread("loop", func() { w.do(regOn("c2", "d2", 2)) }), thread("close", w.closer),
					thread("report", w.reporter)}
			},
			outcome: admittedOrClosed,
			bound:   exBound,
		},
		{
			// Two registrations and a removal in the loop, a close and a
			// report.
			name:  "register2+remove+close+report",
			setup: twoBrokers,
			threads: func(w *world) []*exThread {
				return []*exThread{thread("loop", func() {
					w.do(regOn("c1", "d3", 3))
					w.do(regOn("c2", "d4", 4))
					w.do(rem("c1", "d1"))
				}), thread("close", w.closer), thread("report", w.reporter)}
			},
			outcome: admittedOrClosed,
			bound:   exBound,
		},
	}
}

// TestExploreInterleavings runs every interleaving of each scenario (or
// every one within its preemption bound) and prints the counts.
func TestExploreInterleavings(t *testing.T) {
	model, err := spec.New(mustConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	total, elapsed := 0, time.Duration(0)
	for _, sc := range exScenarios() {
		if raceBuild && (sc.bound < 0 || sc.bound > 1) {
			// The detector sees nothing in a schedule the plain build
			// does not (one thread at a time): under -race, one
			// preemption, the plain build runs them all.
			sc.bound = 1
		}
		t.Run(sc.name, func(t *testing.T) {
			ex := explore(model, sc)
			total += ex.runs
			elapsed += ex.elapsed
			bound := "every interleaving"
			if sc.bound >= 0 {
				bound = fmt.Sprintf("at most %d preemptions", sc.bound)
			}
			t.Logf("%s: %d interleavings (%s), %.0f/s", sc.name, ex.runs, bound, float64(ex.runs)/ex.elapsed.Seconds())
			if ex.fail != nil {
				t.Fatal(ex.fail)
			}
		})
	}
	t.Logf("total: %d interleavings in %v, %.0f/s", total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds())
}

// mustConfig returns the model of exHeader.
func mustConfig(t *testing.T) spec.Config {
	t.Helper()
	raw, err := json.Marshal(exHeader().Model)
	if err != nil {
		t.Fatal(err)
	}
	h := tracecheck.Header{Trace: trace.SchemaVersion}
	if err := json.Unmarshal(raw, &h.Model); err != nil {
		t.Fatal(err)
	}
	cfg, err := h.Config()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestExplorerEnumeratesEverySchedule checks the search itself on
// threads of known lengths (segments between scheduling points, no
// service): without a bound it runs every interleaving exactly once (the
// multinomial count), and with a bound exactly those with at most that
// many preemptions (counted by brute force).
func TestExplorerEnumeratesEverySchedule(t *testing.T) {
	lengths := []int{2, 3, 2}
	run := func(seen map[string]int) func([]int) ([]decision, error) {
		return func(prefix []int) ([]decision, error) {
			left := slices.Clone(lengths)
			var ds []decision
			prev := -1
			for {
				var enabled []int
				for i, n := range left {
					if n > 0 {
						enabled = append(enabled, i)
					}
				}
				if len(enabled) == 0 {
					break
				}
				d := decision{enabled: enabled, prev: prev}
				d.chosen = d.order()[0]
				if k := len(ds); k < len(prefix) {
					d.chosen = prefix[k]
				}
				ds = append(ds, d)
				left[d.chosen]--
				prev = d.chosen
			}
			seen[describe(ds)]++
			return ds, nil
		}
	}
	for _, bound := range []int{-1, 0, 1, 2, 3} {
		seen := map[string]int{}
		ex := exploreSchedules(bound, run(seen))
		want := countSchedules(slices.Clone(lengths), -1, 0, bound)
		if ex.runs != want || len(seen) != want {
			t.Errorf("bound %d: %d runs, %d distinct schedules, want %d", bound, ex.runs, len(seen), want)
		}
	}
	if n := countSchedules(slices.Clone(lengths), -1, 0, -1); n != 210 { // 7!/(2!3!2!)
		t.Errorf("brute force: %d interleavings of 2, 3 and 2 steps, want 210", n)
	}
}

// countSchedules counts by brute force the interleavings of the steps
// left, prev having run last, with pre preemptions so far and at most
// bound (-1: any).
func countSchedules(left []int, prev, pre, bound int) int {
	n, any := 0, false
	for i := range left {
		if left[i] == 0 {
			continue
		}
		any = true
		p := pre
		if prev >= 0 && i != prev && left[prev] > 0 {
			p++
		}
		if bound >= 0 && p > bound {
			continue
		}
		left[i]--
		n += countSchedules(left, i, p, bound)
		left[i]++
	}
	if !any {
		return 1
	}
	return n
}
