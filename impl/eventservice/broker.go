package eventservice

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/store"
)

// broker is the event broker of one upstream cluster. count is read by
// Sample from any goroutine. The published map and the changefeed map
// (and each dispatcher's cf) belong to the request loop; mu makes
// compare-and-delete well defined for a remover outside the loop (see
// [broker.loopLock]).
type broker struct {
	svc     *Service
	cluster ClusterID
	es      store.EventStore
	ss      store.SchemaStore

	// countGate is the broker's admission word: TLA+ count[b] (the atomic
	// dispatcher count) times two, plus TLA+ gateClosed[b] (the broker's
	// copy of the admission gate, set once admission closed) in bit 0.
	// The count is early, so it covers admitted, registered and
	// half-removed dispatchers. One word, so that an admission checks the
	// gate and raises the count in one compare-and-swap (broker.casAdmit),
	// and a close sets the bit with one atomic or (Service.closeBroker).
	countGate atomic.Int64

	// mu guards the published and changefeed maps against removers outside the loop:
	// remove and unpublish always take it; the loop's own steps take it
	// only when offLoop is set.
	mu sync.Mutex
	// published holds the published dispatchers, ordinary and table
	// triggers alike: one entry per ID (R1).
	published map[DispatcherID]*dispatcher
	// changefeeds is the changefeed status: how many dispatchers (admitted
	// ones included) each changefeed has here; no entry for none, except
	// idle.
	changefeeds map[ChangefeedID]*changefeedStatus
	// idle is the one status in changefeeds that may be empty (the last
	// one emptied), kept so that a changefeed whose only dispatcher comes
	// and goes does not allocate a status each time. Snapshots omit it.
	idle *changefeedStatus

	// free holds released dispatchers for reuse (request loop only).
	free []*dispatcher
	// offLoop: a remover runs outside the loop (offLoopRemover, fixed
	// when the broker is created).
	offLoop bool
}

// gateClosed is the gate bit of broker.countGate; the count is countGate >> 1.
const gateClosed = 1

// addCount adds n to b's dispatcher count.
func (b *broker) addCount(n int64) { b.countGate.Add(2 * n) }

// count returns b's dispatcher count.
func (b *broker) count() int64 { return b.countGate.Load() >> 1 }

// maxFree bounds a broker's free dispatchers.
const maxFree = 64

// offLoopRemover tells whether a broker created now must expect a
// remover outside the request loop: only under the DoubleDecrement bug
// (tag bugs, switched on), which runs the inactivity cleanup beside the
// loop. Such a broker locks the loop's own steps (see loopLock) and does
// not reuse released dispatchers (a remover outside the loop may still
// read one the loop released). Every other build and bug runs the normal
// build's code: the tag adds fault points, nothing else.
func offLoopRemover() bool { return bugs.Built && bugs.DoubleDecrementOn() }

// changefeedStatus is a changefeed's entry in its broker (mu).
type changefeedStatus struct {
	id ChangefeedID
	n  int
}

func newBroker(svc *Service, cluster ClusterID, es store.EventStore, ss store.SchemaStore) *broker {
	return &broker{
		svc:         svc,
		cluster:     cluster,
		es:          es,
		ss:          ss,
		published:   make(map[DispatcherID]*dispatcher),
		changefeeds: make(map[ChangefeedID]*changefeedStatus),
		offLoop:     offLoopRemover(),
	}
}

// loopLock takes b.mu for a step of the request loop (lookup,
// lookupAndJoin, publish, removeID, leaveChangefeed, heartbeat, inactive,
// snapshot) if b.offLoop. Otherwise only the loop reads or writes a
// broker's maps: Sample reads only the atomic counts, and every other
// entry point (Do, Submit, Heartbeat, Cleanup, Snapshot) runs in the loop.
// The one exception is a remover outside the loop (remove, which locks
// always), which tests use only to race removers with each other while
// the loop is idle (TestConcurrentRemoversDecrementOnce).
func (b *broker) loopLock() {
	if bugs.Built && b.offLoop {
		b.mu.Lock()
	}
}

// loopUnlock undoes loopLock.
func (b *broker) loopUnlock() {
	if bugs.Built && b.offLoop {
		b.mu.Unlock()
	}
}

// lookup returns the published dispatcher id, ordinary or table trigger
// (request loop, or a test while the loop is idle).
func (b *broker) lookup(id DispatcherID) *dispatcher {
	b.loopLock()
	d := b.published[id]
	b.loopUnlock()
	return d
}

// lookupAndJoin returns the published dispatcher with d's ID, if any,
// and counts d in its changefeed status, in one step (request loop).
func (b *broker) lookupAndJoin(d *dispatcher) *dispatcher {
	b.loopLock()
	b.joinChangefeedLocked(d)
	old := b.published[d.id]
	b.loopUnlock()
	return old
}

// publish stores d in the published map (request loop). It reports
// whether an entry for d.id was already there (it was replaced), so that
// the caller counts d once.
func (b *broker) publish(d *dispatcher) (replaced bool) {
	b.loopLock()
	_, replaced = b.published[d.id]
	b.published[d.id] = d
	b.loopUnlock()
	return replaced
}

// unpublish deletes d's entry only if the map still holds d itself, and
// reports whether this call deleted it (F-R2: only the remover that
// deleted an entry may decrement). The remover that did also drops d from
// its changefeed status, in the same step. With force (the DoubleDecrement
// bug) it drops d from its changefeed even if it lost.
func (b *broker) unpublish(d *dispatcher, force bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	deleted := b.published[d.id] == d
	if deleted {
		delete(b.published, d.id)
	}
	if deleted || force {
		b.leaveChangefeedLocked(d)
	}
	return deleted
}

// joinChangefeedLocked counts d in its changefeed status.
func (b *broker) joinChangefeedLocked(d *dispatcher) {
	if d.cf != nil {
		return
	}
	cf := b.idle
	if cf == nil || cf.id != d.changefeed {
		cf = b.changefeeds[d.changefeed]
	}
	if cf == nil {
		cf = &changefeedStatus{id: d.changefeed}
		b.changefeeds[d.changefeed] = cf
	}
	if cf == b.idle {
		b.idle = nil
	}
	cf.n++
	d.cf = cf
}

// leaveChangefeed drops d from its changefeed status, and the status once
// it is empty.
func (b *broker) leaveChangefeed(d *dispatcher) {
	b.loopLock()
	b.leaveChangefeedLocked(d)
	b.loopUnlock()
}

func (b *broker) leaveChangefeedLocked(d *dispatcher) {
	cf := d.cf
	if cf == nil {
		return
	}
	d.cf = nil
	if cf.n--; cf.n > 0 {
		return
	}
	// The status is empty: keep it as the one idle status, for the
	// changefeed's next dispatcher, and drop the previous idle one.
	if b.idle != nil {
		delete(b.changefeeds, b.idle.id)
	}
	b.idle = cf
}

// newDispatcher returns the registration of req at epoch 0, in a new
// generation of a released dispatcher if there is one (request loop).
func (b *broker) newDispatcher(req *Request) *dispatcher {
	now := b.svc.now().UnixNano()
	var d *dispatcher
	if n := len(b.free); n > 0 {
		d = b.free[n-1]
		b.free[n-1] = nil
		b.free = b.free[:n-1]
	}
	if d == nil || !d.isRemoved() { // a recycled d is always marked removed
		d = &dispatcher{b: b}
	}
	// d is new, or marked removed: no Notify reads its fields, and one of
	// its previous registration still under way finds it released, or
	// after the reuse another generation (R4).
	d.gen++
	d.id = req.Dispatcher
	d.changefeed = req.Changefeed
	d.tableTrigger = req.TableTrigger
	d.table = req.Table
	d.topic = req.Topic
	// Plain writes of the first stat (epoch 0, not removed, not
	// handshaked): every other writer or reader of it is the loop, or
	// Notify as a reader of nstate.
	st := &d.first
	*st = stat{startTs: req.StartTs, checkpointTs: req.StartTs, lastHeartbeat: now}
	if d.stat.Load() != st {
		d.stat.Store(st)
	}
	if d.nstate.Load() == released {
		d.nstate.Store(0) // after the writes: Notify may read d again
	}
	return d
}

// recycle keeps d, released by the request loop (removed, deleted from
// the published map, out of its changefeed, its stores released), for a later
// registration (request loop only).
func (b *broker) recycle(d *dispatcher) {
	if !(bugs.Built && b.offLoop) && len(b.free) < maxFree {
		b.free = append(b.free, d)
	}
}

// casAdmit is the compare-and-swap of TLA+ BrokerAdmit from the gate
// word w read before: it raises b's count by one unless w's gate bit is
// closed. It reports whether the admission was decided (admitted or
// refused); not decided means the word changed since w was read (a
// close's gate bit, another count change), and the caller reads it again.
func (b *broker) casAdmit(w int64) (admitted, decided bool) {
	if w&gateClosed != 0 && !bugs.NoAdmissionGateOn() {
		return false, true
	}
	if bugs.CountAfterPublishOn() {
		return true, true
	}
	if b.countGate.CompareAndSwap(w, w+2) {
		return true, true
	}
	return false, false
}

// step adds delta to b's count (0: none) and, traced, writes the line of
// broker step a of d under the same trace lock, so that the line is in
// the order of the count change among every goroutine's lines.
func (b *broker) step(a brokerStep, d *dispatcher, delta int64) {
	p := pointBrokerStep
	if delta != 0 {
		p = pointCount
	}
	ts := b.svc.lockTrace(p, b)
	if delta != 0 {
		b.addCount(delta)
	}
	if ts != nil {
		ts.brokerStepLine(a, b, d) // and unlocks
	}
}

// add runs the store steps of a registration already admitted and
// counted, d being in its changefeed status (TLA+ BrokerSubscribe, BrokerSubscribeRefused,
// BrokerRegisterTable, BrokerRegisterTableFails; a table trigger's add is
// the one step of BrokerAdmit). On failure it leaves no trace: R3.
//
// The schema store's call gets a context that ends when Run's context
// (ctx) or the request's (reqCtx, nil for Submit) is done: a caller that
// gives up (a gRPC deadline, a cancelled client) releases a blocked
// RegisterTable, whose failure then rolls the registration back (R3)
// and frees the loop for the requests behind it.
func (b *broker) add(ctx, reqCtx context.Context, d *dispatcher, req *Request) error {
	if !d.tableTrigger {
		// d.gen is written only by newDispatcher, in this goroutine.
		sub := store.Subscription{Table: req.Table, StartTs: req.StartTs, OnlyReuse: req.OnlyReuse, Token: d.gen}
		if !b.es.RegisterDispatcher(d.id, sub, d) {
			b.subscribeRefused(d)
			return fmt.Errorf("%w: %s/%s", ErrNotReusable, b.cluster, d.id)
		}
		b.step(stepSubscribe, d, 0) // TLA+ BrokerSubscribe
		sctx, stop := storeContext(ctx, reqCtx)
		err := b.ss.RegisterTable(sctx, req.Table, req.StartTs)
		stop()
		if err != nil {
			b.registerTableFailed(d)
			return fmt.Errorf("eventservice: register table %d of dispatcher %s/%s: %w", req.Table, b.cluster, d.id, err)
		}
	}
	// Publish; count once (R1). The early count already covers d, so a
	// replaced entry (impossible in the serial loop, which removes the old
	// registration first) must give its share back.
	var delta int64
	if b.publish(d) && !bugs.DoubleIncrementOn() {
		delta--
	}
	if bugs.CountAfterPublishOn() {
		delta++
	}
	a := stepRegisterTable // TLA+ BrokerRegisterTable
	if d.tableTrigger {
		a = stepNone // its BrokerAdmit was the admission
	}
	b.step(a, d, delta)
	return nil
}

// storeContext returns the context of a store call that a request causes:
// loopCtx (Run's) if reqCtx cannot be cancelled, else reqCtx (its deadline
// and values) also cancelled when loopCtx is done. stop releases it.
func storeContext(loopCtx, reqCtx context.Context) (context.Context, func()) {
	if reqCtx == nil || reqCtx.Done() == nil {
		return loopCtx, func() {}
	}
	ctx, cancel := context.WithCancel(reqCtx)
	unhook := context.AfterFunc(loopCtx, cancel)
	return ctx, func() { unhook(); cancel() }
}

// subscribeRefused is TLA+ BrokerSubscribeRefused then BrokerRollback:
// the event store refused d.
func (b *broker) subscribeRefused(d *dispatcher) {
	d.markRemoved()
	b.step(stepSubscribeRefused, d, 0)
	b.leaveChangefeed(d)
	b.step(stepRollback, d, b.rollbackDelta())
	b.svc.emit(Event{Kind: EventNotReusable, Cluster: b.cluster, Dispatcher: d.id, Topic: d.topic})
}

// registerTableFailed is TLA+ BrokerRegisterTableFails, BrokerUnsubscribe
// and BrokerRollback. F-R1: the order matters. Mark removed first so that
// no notification in flight or later sees a live dispatcher (R4), release
// the subscription, drop the changefeed entry, and roll the count back
// last, after the store release (R2, R3).
func (b *broker) registerTableFailed(d *dispatcher) {
	leak := bugs.LeakOnSchemaFailureOn()
	if !leak {
		d.markRemoved()
	}
	b.step(stepRegisterTableFails, d, 0)
	early := bugs.RollbackBeforeUnsubscribeOn()
	if early {
		b.addCount(b.rollbackDelta()) // the bug: the count falls while d is still subscribed
	}
	b.svc.at(pointUnsubscribe, b)
	if !leak {
		b.es.UnregisterDispatcher(d.id)
	}
	b.step(stepUnsubscribe, d, 0)
	b.leaveChangefeed(d)
	if early {
		b.step(stepRollback, d, 0)
	} else {
		b.step(stepRollback, d, b.rollbackDelta())
	}
}

// rollbackDelta is the count change that undoes the early count of a
// failed add.
func (b *broker) rollbackDelta() int64 {
	if bugs.CountAfterPublishOn() {
		return 0
	}
	return -1
}

// remove releases d (TLA+ CollectorRemove then BrokerRemoveFinish, or
// BrokerReleaseOld, the step last): mark removed, compare-and-delete,
// drop from the changefeed, release the stores (ordinary dispatchers
// only), and decrement last (R1, R2, F-R2, F6). It reports whether this
// call removed d; a repeated or concurrent remover returns false and
// changes nothing.
func (b *broker) remove(d *dispatcher, last brokerStep) bool {
	d.markRemoved()
	if bug := bugs.DoubleDecrementOn(); !b.unpublish(d, bug) && !bug {
		return false
	}
	if last == stepRemoveFinish && !d.tableTrigger {
		b.step(stepCollectorRemove, d, 0)
	}
	b.release(d, last)
	return true
}

// removeID is remove for the published dispatcher id, if any; the lookup,
// the removed mark and the delete are one step (request loop).
func (b *broker) removeID(id DispatcherID) {
	b.loopLock()
	d := b.published[id]
	if d != nil {
		delete(b.published, id)
		d.markRemoved()
		b.leaveChangefeedLocked(d)
	}
	b.loopUnlock()
	if d != nil {
		if !d.tableTrigger {
			b.step(stepCollectorRemove, d, 0)
		}
		b.release(d, stepRemoveFinish)
		b.recycle(d)
	}
}

// release is the end of a removal whose caller deleted d's entry: release
// the stores (ordinary dispatchers only), and decrement last (R2, F6),
// the decrement being step last.
func (b *broker) release(d *dispatcher, last brokerStep) {
	early := bugs.DecrementBeforeCleanupOn()
	if early {
		b.addCount(-1)
	}
	b.svc.at(pointRelease, b)
	if !d.tableTrigger {
		b.es.UnregisterDispatcher(d.id)
		b.ss.UnregisterTable(d.table)
	}
	if early {
		b.step(last, d, 0)
	} else {
		b.step(last, d, -1)
	}
}

// reset moves d to a newer epoch. A stale epoch (≤ the current one) has
// no effect (R6); a reset never changes the count. The old stat is marked
// removed as part of the replacement (R5).
func (b *broker) reset(d *dispatcher, epoch, startTs uint64) bool {
	for {
		old := d.stat.Load()
		if epoch <= old.epoch || old.removed.Load() || d.isRemoved() {
			return false
		}
		st := &stat{epoch: epoch, startTs: startTs, checkpointTs: max(startTs, old.checkpointTs), lastHeartbeat: old.lastHeartbeat}
		if d.stat.CompareAndSwap(old, st) {
			old.removed.Store(true)
			return true
		}
	}
}

// heartbeat applies one progress entry; it reports false if the broker
// does not know the dispatcher. An entry of another epoch is ignored (R6).
func (b *broker) heartbeat(p Progress, now time.Time) bool {
	b.loopLock() // the stat's loop fields (see stat)
	defer b.loopUnlock()
	d := b.published[p.Dispatcher]
	if d == nil {
		return false
	}
	st := d.stat.Load()
	if st.epoch != p.Epoch {
		return true
	}
	st.checkpointTs = max(st.checkpointTs, p.CheckpointTs)
	st.lastHeartbeat = now.UnixNano()
	return true
}

// inactive returns the dispatchers eligible for the inactivity cleanup:
// handshaked (epoch ≥ 1), or any once admission is closed, and silent for
// longer than timeout. Sorted by ID, for determinism.
func (b *broker) inactive(now time.Time, timeout time.Duration, closed bool) []*dispatcher {
	b.loopLock()
	defer b.loopUnlock()
	var out []*dispatcher
	for _, d := range b.published {
		st := d.stat.Load()
		if (st.epoch > 0 || closed) && now.Sub(time.Unix(0, st.lastHeartbeat)) > timeout {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(x, y *dispatcher) int { return compare(x.id, y.id) })
	return out
}

func compare[T ~string](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (b *broker) snapshot() BrokerSnapshot {
	b.loopLock()
	defer b.loopUnlock()
	bs := BrokerSnapshot{Cluster: b.cluster, Count: b.count()}
	for _, d := range b.published {
		st := d.stat.Load()
		bs.Dispatchers = append(bs.Dispatchers, DispatcherSnapshot{
			ID:            d.id,
			Changefeed:    d.changefeed,
			TableTrigger:  d.tableTrigger,
			Table:         d.table,
			Epoch:         st.epoch,
			StartTs:       st.startTs,
			CheckpointTs:  st.checkpointTs,
			LastHeartbeat: time.Unix(0, st.lastHeartbeat),
		})
	}
	slices.SortFunc(bs.Dispatchers, func(x, y DispatcherSnapshot) int { return compare(x.ID, y.ID) })
	for id, cf := range b.changefeeds {
		if cf.n > 0 {
			bs.Changefeeds = append(bs.Changefeeds, id)
		}
	}
	slices.Sort(bs.Changefeeds)
	return bs
}
