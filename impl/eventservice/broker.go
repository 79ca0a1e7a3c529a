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

// stat is one epoch of a dispatcher's registration (upstream
// dispatcherStat). A reset replaces it under the same *dispatcher by
// compare-and-swap; the old one is marked removed (R5).
type stat struct {
	epoch   uint64
	startTs uint64

	removed       atomic.Bool
	handshaked    atomic.Bool
	checkpointTs  atomic.Uint64
	lastHeartbeat atomic.Int64 // unix nanoseconds
}

// dispatcher is one registration: the stable pointer the maps and the
// event-store notifier hold for the life of the registration.
type dispatcher struct {
	b            *broker
	id           DispatcherID
	changefeed   ChangefeedID
	tableTrigger bool
	table        TableID
	topic        string
	stat         atomic.Pointer[stat]
}

// markRemoved sets the removed mark of d's current stat (TLA+ removed[d]):
// from now on no notification acts on it (R4).
func (d *dispatcher) markRemoved() {
	d.stat.Load().removed.Store(true)
}

// notify is the notifier d registers with the event store. It runs on the
// event store's goroutines and drops the call once d is marked removed
// (R4, seed 004); otherwise it sends Ready while the epoch is 0, and the
// Handshake of a newer epoch once.
func (d *dispatcher) notify() {
	st := d.stat.Load()
	s := d.b.svc
	if st.removed.Load() {
		s.dropped.Add(1)
		return
	}
	if st.epoch == 0 {
		s.emit(Event{Kind: EventReady, Cluster: d.b.cluster, Dispatcher: d.id, Topic: d.topic})
		return
	}
	if !st.handshaked.Swap(true) {
		s.emit(Event{Kind: EventHandshake, Cluster: d.b.cluster, Dispatcher: d.id, Epoch: st.epoch, Topic: d.topic})
	}
}

// broker is the event broker of one upstream cluster. count is read by
// Report from any goroutine; the maps are written by the request loop and
// guarded by mu so that compare-and-delete is well defined even for a
// remover outside the loop.
type broker struct {
	svc     *Service
	cluster ClusterID
	es      store.EventStore
	ss      store.SchemaStore

	// count is the atomic dispatcher count (TLA+ count): early count, so
	// it covers admitted, registered and half-removed dispatchers.
	count atomic.Int64

	mu          sync.Mutex
	dispatchers map[DispatcherID]*dispatcher // ordinary
	triggers    map[DispatcherID]*dispatcher // table triggers
	changefeeds map[ChangefeedID]map[DispatcherID]*dispatcher
}

func newBroker(svc *Service, cluster ClusterID, es store.EventStore, ss store.SchemaStore) *broker {
	return &broker{
		svc:         svc,
		cluster:     cluster,
		es:          es,
		ss:          ss,
		dispatchers: make(map[DispatcherID]*dispatcher),
		triggers:    make(map[DispatcherID]*dispatcher),
		changefeeds: make(map[ChangefeedID]map[DispatcherID]*dispatcher),
	}
}

// lookup returns the published dispatcher id, ordinary or table trigger.
func (b *broker) lookup(id DispatcherID) *dispatcher {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d, ok := b.dispatchers[id]; ok {
		return d
	}
	return b.triggers[id]
}

// publish stores d in its map. It reports whether an entry for d.id was
// already there (it was replaced), so that the caller counts d once.
func (b *broker) publish(d *dispatcher) (replaced bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.dispatchers
	if d.tableTrigger {
		m = b.triggers
	}
	_, replaced = m[d.id]
	m[d.id] = d
	return replaced
}

// compareAndDelete deletes d's entry only if the map still holds d
// itself, and reports whether this call deleted it (F-R2: only the
// remover that deleted an entry may decrement).
func (b *broker) compareAndDelete(d *dispatcher) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.dispatchers
	if d.tableTrigger {
		m = b.triggers
	}
	if m[d.id] != d {
		return false
	}
	delete(m, d.id)
	return true
}

func (b *broker) addToChangefeed(d *dispatcher) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cf := b.changefeeds[d.changefeed]
	if cf == nil {
		cf = make(map[DispatcherID]*dispatcher)
		b.changefeeds[d.changefeed] = cf
	}
	cf[d.id] = d
}

// removeFromChangefeed drops d from its changefeed status, and the status
// once it is empty.
func (b *broker) removeFromChangefeed(d *dispatcher) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cf := b.changefeeds[d.changefeed]
	if cf[d.id] != d {
		return
	}
	delete(cf, d.id)
	if len(cf) == 0 {
		delete(b.changefeeds, d.changefeed)
	}
}

// add runs the store steps of a registration already admitted and
// counted (TLA+ BrokerSubscribe, BrokerSubscribeRefused,
// BrokerRegisterTable, BrokerRegisterTableFails; a table trigger's add is
// the one step of CollectorRegister). On failure it leaves no trace: R3.
func (b *broker) add(ctx context.Context, req Request) error {
	d := &dispatcher{
		b:            b,
		id:           req.Dispatcher,
		changefeed:   req.Changefeed,
		tableTrigger: req.TableTrigger,
		table:        req.Table,
		topic:        req.Topic,
	}
	st := &stat{startTs: req.StartTs}
	st.checkpointTs.Store(req.StartTs)
	st.lastHeartbeat.Store(b.svc.now().UnixNano())
	d.stat.Store(st)
	b.addToChangefeed(d)

	if !d.tableTrigger {
		sub := store.Subscription{Table: req.Table, StartTs: req.StartTs, OnlyReuse: req.OnlyReuse}
		// BrokerSubscribe / BrokerSubscribeRefused.
		if !b.es.RegisterDispatcher(d.id, sub, d.notify) {
			d.markRemoved()
			b.removeFromChangefeed(d)
			b.rollback()
			b.svc.emit(Event{Kind: EventNotReusable, Cluster: b.cluster, Dispatcher: d.id, Topic: d.topic})
			return fmt.Errorf("%w: %s/%s", ErrNotReusable, b.cluster, d.id)
		}
		// BrokerRegisterTable / BrokerRegisterTableFails.
		if err := b.ss.RegisterTable(ctx, req.Table, req.StartTs); err != nil {
			// Seed 004: the order matters. Mark removed first so that no
			// notification in flight or later sees a live dispatcher (R4),
			// release the subscription, drop the changefeed entry, and roll
			// the count back last, after the store release (R2, R3).
			if !bugs.LeakOnSchemaFailureOn() {
				d.markRemoved()
				b.es.UnregisterDispatcher(d.id)
			}
			b.removeFromChangefeed(d)
			b.rollback()
			return fmt.Errorf("eventservice: register table %d of dispatcher %s/%s: %w", req.Table, b.cluster, d.id, err)
		}
	}
	// Publish; count once (R1). The early count already covers d, so a
	// replaced entry (impossible in the serial loop, which removes the old
	// registration first) must give its share back.
	if b.publish(d) && !bugs.DoubleIncrementOn() {
		b.count.Add(-1)
	}
	if bugs.CountAfterPublishOn() {
		b.count.Add(1)
	}
	return nil
}

// rollback undoes the early count of a failed add.
func (b *broker) rollback() {
	if !bugs.CountAfterPublishOn() {
		b.count.Add(-1)
	}
}

// remove releases d (TLA+ CollectorRemove then BrokerRemoveFinish): mark
// removed, compare-and-delete, drop from the changefeed, release the
// stores (ordinary dispatchers only), and decrement last (R1, R2, F-R2,
// F6). It reports whether this call removed d; a repeated or concurrent
// remover returns false and changes nothing.
func (b *broker) remove(d *dispatcher) bool {
	d.markRemoved()
	if !b.compareAndDelete(d) && !bugs.DoubleDecrementOn() {
		return false
	}
	b.removeFromChangefeed(d)
	if bugs.DecrementBeforeCleanupOn() {
		b.count.Add(-1)
	}
	if !d.tableTrigger {
		b.es.UnregisterDispatcher(d.id)
		b.ss.UnregisterTable(d.table)
	}
	if !bugs.DecrementBeforeCleanupOn() {
		b.count.Add(-1)
	}
	return true
}

// reset moves d to a newer epoch. A stale epoch (≤ the current one) has
// no effect (R6); a reset never changes the count. The old stat is marked
// removed as part of the replacement (R5).
func (b *broker) reset(d *dispatcher, epoch, startTs uint64) bool {
	for {
		old := d.stat.Load()
		if epoch <= old.epoch || old.removed.Load() {
			return false
		}
		st := &stat{epoch: epoch, startTs: startTs}
		st.checkpointTs.Store(max(startTs, old.checkpointTs.Load()))
		st.lastHeartbeat.Store(old.lastHeartbeat.Load())
		if d.stat.CompareAndSwap(old, st) {
			old.removed.Store(true)
			return true
		}
	}
}

// heartbeat applies one progress entry; it reports false if the broker
// does not know the dispatcher. An entry of another epoch is ignored (R6).
func (b *broker) heartbeat(p Progress, now time.Time) bool {
	d := b.lookup(p.Dispatcher)
	if d == nil {
		return false
	}
	st := d.stat.Load()
	if st.epoch != p.Epoch {
		return true
	}
	for {
		cur := st.checkpointTs.Load()
		if p.CheckpointTs <= cur || st.checkpointTs.CompareAndSwap(cur, p.CheckpointTs) {
			break
		}
	}
	st.lastHeartbeat.Store(now.UnixNano())
	return true
}

// inactive returns the dispatchers eligible for the inactivity cleanup:
// handshaked (epoch ≥ 1), or any once admission is closed, and silent for
// longer than timeout. Sorted by ID, for determinism.
func (b *broker) inactive(now time.Time, timeout time.Duration, closed bool) []*dispatcher {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*dispatcher
	for _, m := range []map[DispatcherID]*dispatcher{b.dispatchers, b.triggers} {
		for _, d := range m {
			st := d.stat.Load()
			if (st.epoch > 0 || closed) && now.Sub(time.Unix(0, st.lastHeartbeat.Load())) > timeout {
				out = append(out, d)
			}
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
	b.mu.Lock()
	defer b.mu.Unlock()
	bs := BrokerSnapshot{Cluster: b.cluster, Count: b.count.Load()}
	for _, m := range []map[DispatcherID]*dispatcher{b.dispatchers, b.triggers} {
		for _, d := range m {
			st := d.stat.Load()
			bs.Dispatchers = append(bs.Dispatchers, DispatcherSnapshot{
				ID:            d.id,
				Changefeed:    d.changefeed,
				TableTrigger:  d.tableTrigger,
				Table:         d.table,
				Epoch:         st.epoch,
				StartTs:       st.startTs,
				CheckpointTs:  st.checkpointTs.Load(),
				LastHeartbeat: time.Unix(0, st.lastHeartbeat.Load()),
			})
		}
	}
	slices.SortFunc(bs.Dispatchers, func(x, y DispatcherSnapshot) int { return compare(x.ID, y.ID) })
	for cf := range b.changefeeds {
		bs.Changefeeds = append(bs.Changefeeds, cf)
	}
	slices.Sort(bs.Changefeeds)
	return bs
}
