package store

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/drainproof/drainproof/impl/bugs"
)

// backend is where an event store keeps its events: memory
// ([MemEventStore]) or Pebble ([PebbleEventStore]). The engine around it
// owns subscriptions, resolved timestamps, notifications, fault injection,
// resource counts and the batch discipline, so that both stores share
// them; a backend only stores and reads.
type backend interface {
	newBatch() rawBatch
	newIter(table TableID, after, upTo uint64) (rawIter, error)
	close() error
}

// rawBatch is a backend's write batch; close releases it and must be
// called whether or not commit was.
type rawBatch interface {
	set(table TableID, e Event) error
	commit() error
	close() error
}

// rawIter is a backend's iterator over one table's events.
type rawIter interface {
	next() bool
	event() Event
	err() error
	close() error
}

type subscriber struct {
	sub    Subscription
	notify Notifier
}

// engine is the implementation the event stores share.
type engine struct {
	// life orders data calls (read-locked) before Close (locked), which
	// closes the backend: a backend is never used after its close.
	life       sync.RWMutex
	dataClosed bool // under life
	data       backend
	// wmu serialises writers: WriteEvents' check against the resolved
	// timestamp and its commit are one step.
	wmu sync.Mutex

	mu       sync.Mutex
	subs     map[DispatcherID]subscriber
	closed   bool
	resolved map[TableID]uint64
	iters    map[*iterator]struct{}
	// inject is the fault injector of [WithFaultInjector] (nil: none).
	inject func(Fault) error

	batches atomic.Int64
}

func newEngine(data backend, opts []Option) engine {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return engine{data: data, subs: make(map[DispatcherID]subscriber), resolved: make(map[TableID]uint64),
		iters: make(map[*iterator]struct{}), inject: o.inject}
}

// RegisterDispatcher implements [EventStore]. It refuses when the store
// is closed.
func (s *engine) RegisterDispatcher(id DispatcherID, sub Subscription, notify Notifier) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.subs[id] = subscriber{sub: sub, notify: notify}
	return true
}

// UnregisterDispatcher implements [EventStore].
func (s *engine) UnregisterDispatcher(id DispatcherID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.subs, id)
}

// Close closes the store (see [DataStore]): every later
// RegisterDispatcher refuses, data calls return [ErrClosed], iterators
// still open are closed (the error wraps [ErrLeakedIterators]) and the
// backend is released.
func (s *engine) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.life.Lock()
	defer s.life.Unlock()
	if s.dataClosed {
		return nil
	}
	s.dataClosed = true
	s.mu.Lock()
	open := make([]*iterator, 0, len(s.iters))
	for it := range s.iters {
		it.closed = true
		open = append(open, it)
	}
	clear(s.iters)
	s.mu.Unlock()
	var errs []error
	for _, it := range open {
		errs = append(errs, it.raw.close())
	}
	if len(open) > 0 {
		errs = append(errs, fmt.Errorf("%w: %d", ErrLeakedIterators, len(open)))
	}
	errs = append(errs, s.data.close())
	return errors.Join(errs...)
}

// notifyTable calls the notifier of every subscriber of table, in
// dispatcher order, on the caller's goroutine.
func (s *engine) notifyTable(table TableID) {
	s.mu.Lock()
	var to []struct {
		id DispatcherID
		subscriber
	}
	for id, sub := range s.subs {
		if sub.sub.Table == table {
			to = append(to, struct {
				id DispatcherID
				subscriber
			}{id, sub})
		}
	}
	s.mu.Unlock()
	slices.SortFunc(to, func(a, b struct {
		id DispatcherID
		subscriber
	}) int {
		return cmp.Compare(a.id, b.id)
	})
	for _, sub := range to {
		sub.notify.Notify(sub.sub.Token)
	}
}

// fault asks the fault injector, if any, whether the step at f fails.
func (s *engine) fault(f Fault) error {
	if s.inject == nil {
		return nil
	}
	return s.inject(f)
}

// Resources returns the open batches, iterators and subscriptions.
func (s *engine) Resources() Resources {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Resources{Batches: s.batches.Load(), Iterators: int64(len(s.iters)), Subscriptions: int64(len(s.subs))}
}

// ResolvedTs returns table's resolved timestamp (0 if none).
func (s *engine) ResolvedTs(table TableID) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resolved[table]
}

// AdvanceResolvedTs raises table's resolved timestamp to ts and notifies
// the table's subscribers; a ts not above the current one does nothing.
func (s *engine) AdvanceResolvedTs(table TableID, ts uint64) error {
	raised := false
	err := s.writing(func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if raised = ts > s.resolved[table]; raised {
			s.resolved[table] = ts
		}
		return nil
	})
	if raised {
		s.notifyTable(table)
	}
	return err
}

// writing runs fn as the one writer, before any Close. Notifications are
// sent after it, with no lock held, so a notifier may read the store.
func (s *engine) writing(fn func() error) error {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.dataClosed {
		return ErrClosed
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return fn()
}

// WriteEvents writes events of table in one batch (see [DataStore]) and
// notifies the table's subscribers.
func (s *engine) WriteEvents(table TableID, events []Event) error {
	if err := s.writing(func() error { return s.writeLocked(table, events) }); err != nil {
		return err
	}
	s.notifyTable(table)
	return nil
}

func (s *engine) writeLocked(table TableID, events []Event) error {
	resolved := s.ResolvedTs(table)
	for _, e := range events {
		if e.CommitTs <= resolved {
			return fmt.Errorf("%w: table %d, event %d, resolved %d", ErrBehindResolved, table, e.CommitTs, resolved)
		}
	}
	return s.writeBatch(table, events)
}

// writeBatch is upstream's writeEvents: one batch, closed on every path
// (TiCDC PR #4366's defer batch.Close()). Under the bug LeakBatchOnError the
// batch is closed only after a successful commit, as before the fix.
func (s *engine) writeBatch(table TableID, events []Event) (err error) {
	b := s.data.newBatch()
	s.batches.Add(1)
	closeBatch := func() {
		if cerr := b.close(); err == nil {
			err = cerr
		}
		s.batches.Add(-1)
	}
	if bugs.LeakBatchOnErrorOn() {
		defer func() {
			if err == nil {
				closeBatch()
			}
		}()
	} else {
		defer closeBatch()
	}
	for _, e := range events {
		if err := s.fault(FaultBatchSet); err != nil {
			return err
		}
		if err := b.set(table, e); err != nil {
			return err
		}
	}
	if err := s.fault(FaultBatchCommit); err != nil {
		return err
	}
	return b.commit()
}

// Iter returns an iterator over id's events (see [DataStore]).
func (s *engine) Iter(id DispatcherID, after, upTo uint64) (EventIterator, error) {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.dataClosed {
		return nil, ErrClosed
	}
	s.mu.Lock()
	sub, ok := s.subs[id]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotSubscribed, id)
	}
	if err := s.fault(FaultIterOpen); err != nil {
		return nil, err
	}
	after = max(after, sub.sub.StartTs)
	raw, err := s.data.newIter(sub.sub.Table, after, upTo)
	if err != nil {
		return nil, err
	}
	it := &iterator{s: s, raw: raw}
	s.mu.Lock()
	s.iters[it] = struct{}{}
	s.mu.Unlock()
	return it, nil
}

// iterator wraps a backend iterator: it counts as open until Close, and
// its calls are ordered before the store's Close.
type iterator struct {
	s      *engine
	raw    rawIter
	closed bool // under s.mu
	err    error
	cur    Event
}

func (it *iterator) Next() bool {
	it.s.life.RLock()
	defer it.s.life.RUnlock()
	it.s.mu.Lock()
	closed := it.closed
	it.s.mu.Unlock()
	if closed || it.err != nil {
		return false
	}
	if err := it.s.fault(FaultIterNext); err != nil {
		it.err = err
		return false
	}
	if !it.raw.next() {
		it.err = it.raw.err()
		return false
	}
	it.cur = it.raw.event()
	if err := it.raw.err(); err != nil {
		it.err, it.cur = err, Event{}
		return false
	}
	return true
}

func (it *iterator) Event() Event { return it.cur }

func (it *iterator) Err() error { return it.err }

func (it *iterator) Close() error {
	it.s.life.RLock()
	defer it.s.life.RUnlock()
	it.s.mu.Lock()
	if it.closed {
		it.s.mu.Unlock()
		return nil
	}
	it.closed = true
	delete(it.s.iters, it)
	it.s.mu.Unlock()
	return it.raw.close()
}
