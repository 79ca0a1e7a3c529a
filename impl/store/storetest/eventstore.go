package storetest

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/drainproof/drainproof/impl/store"
)

// ErrInjectedFault is the error of a fault injected without one.
var ErrInjectedFault = errors.New("storetest: injected fault")

// EventStore is a [store.DataStore] with fault switches around it: it can
// refuse registrations, hold unregistrations, fail the data path's fault
// points ([store.Faults]) once each, and it records what the model tracks
// per dispatcher (the variable subscribed of tla/DrainRegistration.tla is
// [EventStore.Subscribed]). Its zero value is not usable; call
// [NewMemEventStore], [NewPebbleEventStore] or [Wrap].
type EventStore struct {
	store.DataStore

	// mu is held across the inner store's Register and Unregister calls,
	// so that subs follows the inner store's own order of those calls.
	mu          sync.Mutex
	subs        map[store.DispatcherID]subscription
	refuse      func(store.DispatcherID, store.Subscription) bool
	unregHold   holdSlot
	registers   int
	unregisters int

	fmu    sync.Mutex
	faults map[store.Fault]error
}

type subscription struct {
	sub    store.Subscription
	notify store.Notifier
}

// NewMemEventStore returns an empty, open in-memory event store with fault
// switches.
func NewMemEventStore() *EventStore {
	s := newEventStore()
	s.DataStore = store.NewMemEventStore(store.WithFaultInjector(s.fault))
	return s
}

// NewPebbleEventStore opens a Pebble event store in dir (a temporary
// directory that Close removes when dir is ""), with fault switches.
func NewPebbleEventStore(dir string) (*EventStore, error) {
	s := newEventStore()
	p, err := store.NewPebbleEventStore(dir, store.WithFaultInjector(s.fault))
	if err != nil {
		return nil, err
	}
	s.DataStore = p
	return s, nil
}

// OpenPebbleEventStore opens a Pebble event store in dir as
// [store.OpenPebbleEventStore] does (opts may set its retry policy), with
// fault switches.
func OpenPebbleEventStore(ctx context.Context, dir string, opts ...store.Option) (*EventStore, error) {
	s := newEventStore()
	p, err := store.OpenPebbleEventStore(ctx, dir, append(slices.Clip(opts), store.WithFaultInjector(s.fault))...)
	if err != nil {
		return nil, err
	}
	s.DataStore = p
	return s, nil
}

// Wrap puts refusal, hold and bookkeeping switches around any data store
// (InjectFault has no effect: the fault points are inside the store, and
// only a store built here reaches them).
func Wrap(inner store.DataStore) *EventStore {
	s := newEventStore()
	s.DataStore = inner
	return s
}

func newEventStore() *EventStore {
	return &EventStore{subs: make(map[store.DispatcherID]subscription), faults: make(map[store.Fault]error)}
}

// RegisterDispatcher implements [store.EventStore]: it refuses when the
// refusal predicate holds, and otherwise asks the inner store.
func (s *EventStore) RegisterDispatcher(id store.DispatcherID, sub store.Subscription, notify store.Notifier) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse != nil && s.refuse(id, sub) {
		return false
	}
	if !s.DataStore.RegisterDispatcher(id, sub, notify) {
		return false
	}
	s.subs[id] = subscription{sub: sub, notify: notify}
	s.registers++
	return true
}

// UnregisterDispatcher implements [store.EventStore]. While a hold from
// BlockUnregister is installed, it waits for its release first.
func (s *EventStore) UnregisterDispatcher(id store.DispatcherID) {
	_ = s.unregHold.pass(context.Background())
	s.mu.Lock()
	defer s.mu.Unlock()
	s.DataStore.UnregisterDispatcher(id)
	delete(s.subs, id)
	s.unregisters++
}

// Refuse makes RegisterDispatcher refuse every id for which pred returns
// true; a nil pred refuses nothing.
func (s *EventStore) Refuse(pred func(store.DispatcherID, store.Subscription) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = pred
}

// BlockUnregister makes UnregisterDispatcher calls wait until the returned
// hold is released. The hold stays installed until Unblock.
func (s *EventStore) BlockUnregister() *Hold { return s.unregHold.install() }

// Unblock removes the hold installed by BlockUnregister (without
// releasing calls it already holds).
func (s *EventStore) Unblock() { s.unregHold.remove() }

// Subscribed reports whether id holds a subscription.
func (s *EventStore) Subscribed(id store.DispatcherID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.subs[id]
	return ok
}

// Subscribers returns the subscribed ids, sorted.
func (s *EventStore) Subscribers() []store.DispatcherID {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]store.DispatcherID, 0, len(s.subs))
	for id := range s.subs {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Registers returns the number of accepted RegisterDispatcher calls.
func (s *EventStore) Registers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.registers
}

// Unregisters returns the number of UnregisterDispatcher calls that
// finished.
func (s *EventStore) Unregisters() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unregisters
}

// Notify calls id's notifier, as a resolved-ts notification would, on the
// caller's goroutine. It returns false if id holds no subscription.
func (s *EventStore) Notify(id store.DispatcherID) bool {
	s.mu.Lock()
	sub, ok := s.subs[id]
	s.mu.Unlock()
	if !ok {
		return false
	}
	sub.notify.Notify(sub.sub.Token)
	return true
}

// InjectFault makes the next pass through fault point f fail with err
// ([ErrInjectedFault] if nil). Each injected fault fires once.
func (s *EventStore) InjectFault(f store.Fault, err error) {
	if err == nil {
		err = ErrInjectedFault
	}
	s.fmu.Lock()
	defer s.fmu.Unlock()
	s.faults[f] = err
}

// fault is the inner store's fault injector: the error injected at f, once.
func (s *EventStore) fault(f store.Fault) error {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	err := s.faults[f]
	delete(s.faults, f)
	return err
}
