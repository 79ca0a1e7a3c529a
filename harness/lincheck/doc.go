// Package lincheck checks that the event service (package
// impl/eventservice) is linearizable: that what its concurrent callers
// observe is explained by one sequential order of atomic steps of its
// sequential specification (the registration rules of docs/protocol.md §5). The checker is
// porcupine (github.com/anishathalye/porcupine v1.3.1).
//
// # Usage
//
//	h, err := lincheck.Record(ctx, lincheck.Config{Clients: 8, Ops: 1000, Seed: 1})
//	res := lincheck.Check(h, 10*time.Second) // Linearizable, NotLinearizable or Unknown
//	if res.Outcome == lincheck.NotLinearizable {
//		res.VisualizeFile("lincheck.html")
//	}
//
// [Record] runs the clients against a real service; [Check] checks a
// [History] against [Model]; [History.Save] and [Load] keep histories in
// JSON files (Load validates strictly and never panics); `checker
// lincheck` is the command line.
//
// # What is recorded
//
// N client goroutines issue random operations on one service with two
// brokers (clusters c1 and c2: dispatcher index i is broker i mod 2's,
// [BrokerOf]) over in-memory stores shared by both: Register of ordinary
// dispatchers d0..d5 and table triggers t0..t2, Remove, Reset (epochs
// 1..4), Report, the inactivity Cleanup (the service's clock jumps an hour
// at every reading, so every dispatcher that has handshaked, or every
// dispatcher once admission is closed, is inactive), one CloseAdmission
// in the second half of the run, and Subscribers, a read of the event
// store's subscriptions. Store faults are seeded and carried by the
// request: a registration's StartTs says whether RegisterDispatcher
// refuses it or RegisterTable fails it, so the specification knows what
// the registration must return. A third of the RegisterTable and
// UnregisterDispatcher calls also sleep (up to Config.Delay), so that
// reads land in the middle of a request. Between rounds of Config.Round
// operations per client, every client waits and the recorder takes an
// audit: the service's Snapshot and both stores, read while nothing else
// runs.
//
// Two brokers: Report sums the brokers' counts one load at a time, so its
// sum is not an atomic read of the total; the specification reads the
// brokers one step each, in the order the service created them, which the
// recorder fixes (it creates c1's broker, then c2's, before the first
// audit). So a report that straddles a removal on c1 and a registration
// on c2 may count both, as the code does, and the check covers the
// non-atomic sum too.
//
// # The clock (porcupine issue #40)
//
// Call and return times are ticks of one shared counter advanced with
// atomic adds: the call tick is taken before the call starts, the return
// tick after it returned. Go's atomics are sequentially consistent, so
// the ticks are totally ordered consistently with every happens-before
// edge: if operation A's return tick is smaller than B's call tick, A's
// add came first in that total order, every effect of A (sequenced before
// its return tick) happens before B's call tick and hence before every
// effect of B. A real-time order porcupine infers from the ticks is
// therefore a real order of the effects, on any CPU. Monotonic clock
// readings (time.Now) carry no such guarantee: they are not memory
// operations, and on weakly ordered CPUs (issue #40: ARM64, 5-100 ns
// skew) an effect can become visible on another core before the reading
// that precedes it, so a correct history can look illegal.
//
// # The specification
//
// [Model] is the sequential specification as callers see it: the
// published set (with epochs), the event store's subscriptions, the
// count, the admission gate. The serial request loop (R7) makes a request
// a sequence of steps, and callers can see between them: a report during
// a registration counts it early (R2), a failing registration's count
// rises and falls back, a replaced registration is released before it is
// decremented, and a removal releases its stores before it decrements. So
// each client operation becomes one porcupine operation per step, all with
// the operation's interval ([History.Operations]):
//
//   - register: BrokerAdmit (the gate; the early count) · old-release ·
//     old-drop (F-R3: a registration of a published ID first releases and
//     decrements the old one) · BrokerSubscribe (refused: roll back; ok:
//     publish) · BrokerUnsubscribe · BrokerRollback (RegisterTable
//     failed); a table trigger: BrokerAdmit · finish; a refused
//     registration: BrokerAdmit only;
//   - remove: release (delete, store release) · decrement; a table
//     trigger: one step, CollectorRemove;
//   - cleanup: start (which dispatchers are inactive) · release ·
//     decrement per removed dispatcher, in ID order;
//   - report: ServiceStartReport (the gate) · ServiceReadBroker per broker
//     (Report reads the gate, then each broker's count);
//   - close: ServiceCloseBroker per broker (its gate bit) ·
//     ServiceFinishClose (the flag);
//   - reset, subscribers, audit: one step each.
//
// The state records which request the loop is in and at which step, so
// the steps of one request happen in order and no two requests interleave
// (R7); report and close steps keep per-client bits so a report reads
// its gate before its counts, in broker order, and a close closes the
// brokers' bits in order before the flag. The admission step is the one
// compare-and-swap on its broker's gate word: it is admitted iff that
// broker's bit is open, and a refused registration finishes the close
// before it returns. An admitted registration must return what its
// fault says; one after the gate closed must be refused (R8); a reset of an
// unpublished dispatcher fails and moves a published one only to a newer
// epoch (R6); an audit must see exactly the model's state, with one schema
// reference per published ordinary dispatcher (R9) and no leaked
// subscription (R3).
//
// States are small comparable values ([State], 108 bytes): Equal is
// ==, Hash mixes the fields, and Step is constant-time (StepContext is
// set but has nothing to interrupt; porcupine checks its context between
// steps).
//
// # Partition: why it is sound
//
// The specification has a single object (one gate, one count, one serial
// loop shared by every dispatcher), so partitioning by key would be
// unsound: a report's count depends on every dispatcher, and R7 orders
// requests on different dispatchers. [Partition] instead cuts the history
// in time, at audits that overlap no other operation (it checks this
// itself, so it is sound on any history, recorded or hand-written). Such
// an audit ends the partition before it, where its step requires the
// model state to equal what it observed, and starts the partition after
// it as an assume step that sets that state. Claim: the history is
// linearizable iff every partition is. (⇒) Restrict a linearization of
// the whole history to a partition: the audit is ordered after every
// earlier operation and before every later one by real time; the state at
// the audit equals its observation, so the suffix replays from the assume
// step with the same states. (⇐) Concatenate the partitions'
// linearizations: at each cut the first partition ends in the observed
// state (the audit step checked it) and the next starts from it (the
// assume step); the model's future depends only on its state; and
// operations of different partitions are separated in real time by the
// audit, so the concatenation respects real time. The argument needs the
// audit to observe the whole model state: it does (published set and
// epochs, count, gate, subscriptions; no request and no report is in
// flight at a quiescent point, which the audit step also requires).
//
// # Trace mode
//
// With Config.Tracer set (`checker lincheck --trace FILE`), Record runs in
// trace mode, whose trace `checker trace` validates against
// tla/DrainRegistration.tla (docs/trace.md, "lincheck's trace"): the
// dispatchers are the model's 8 (d0..d5, t0, t1: [NumTraceIDs]); only
// client 0 reports, through a real node's heartbeat (impl/node) that a real
// coordinator (impl/coordinator) observes, as the model has one sample;
// and the close operation first drives the node to STOPPING as the
// model's coordinator does (CoordSendDraining, NodeRecvCommand, ...,
// CoordSendStopping, NodeRecvCommand), then calls CloseAdmission, as the
// model closes admission only once the node is STOPPING. The service's
// Stopping callback reads the node's liveness, so from then on a gate
// check or a report also closes admission. The two liveness steps wait
// until no client operation is under way (a read-write lock), because a
// gate check or a heartbeat reads the liveness before it writes its
// line; everything else stays concurrent. The history is checked as any
// other: the close's interval covers the drive.
//
// # Bugs of the zoo
//
// Built with -tags bugs and DRAINPROOF_BUG set, TestRecordedLinearizable
// fails for each registry bug: CountAfterPublish (a subscription is seen
// while the count does not cover it), NoAdmissionGate (a registration
// succeeds after CloseAdmission returned), DecrementBeforeCleanup (a
// report sees the decrement while the subscription is still held),
// LeakOnSchemaFailure (a subscription outlives its failed registration),
// DoubleDecrement (the cleanup runs beside the loop and both removers
// decrement: the count falls below the published set), DoubleIncrement
// (a repeated registration counts twice). Of the bugs at the
// implementation's granularity it catches SampleBeforeClose now and then
// (a closed report that summed before the close); the event service's
// deterministic tests catch it and the others every time.
package lincheck
