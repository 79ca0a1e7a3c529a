package storetest

import (
	"context"
	"errors"
	"sync"

	"github.com/drainproof/drainproof/impl/store"
)

// ErrInjected is the error a [MemSchemaStore] fault returns when the test
// gave none.
var ErrInjected = errors.New("storetest: injected RegisterTable failure")

// Hold holds store calls until it is released. A test gets one from
// [MemSchemaStore.BlockRegisterTable] or [EventStore.BlockUnregister],
// waits on [Hold.Entered] until a call is held, inspects the system, and
// calls [Hold.Release].
type Hold struct {
	entered  chan struct{}
	released chan struct{}
	once     sync.Once
	enter    sync.Once
}

func newHold() *Hold {
	return &Hold{entered: make(chan struct{}), released: make(chan struct{})}
}

// Entered is closed once a call is held by g.
func (g *Hold) Entered() <-chan struct{} { return g.entered }

// Release lets every held call (and every later one) go on. It may be
// called more than once.
func (g *Hold) Release() { g.once.Do(func() { close(g.released) }) }

// wait holds the caller until g is released or ctx is done.
func (g *Hold) wait(ctx context.Context) error {
	g.enter.Do(func() { close(g.entered) })
	select {
	case <-g.released:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// holdSlot is where a test installs a [Hold] on one kind of store call:
// install puts a fresh hold in, remove takes it out (calls it already
// holds stay held until Release), and pass makes a call wait on the hold
// installed when it arrives, if any. The slot has its own lock, so a held
// call waits without the store's.
type holdSlot struct {
	mu sync.Mutex
	h  *Hold
}

func (s *holdSlot) install() *Hold {
	h := newHold()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.h = h
	return h
}

func (s *holdSlot) remove() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.h = nil
}

func (s *holdSlot) pass(ctx context.Context) error {
	s.mu.Lock()
	h := s.h
	s.mu.Unlock()
	if h == nil {
		return nil
	}
	return h.wait(ctx)
}

// MemSchemaStore is an in-memory [store.SchemaStore] that counts references per
// table and can fail or block RegisterTable and close. Its zero value is
// not usable; call [NewMemSchemaStore].
type MemSchemaStore struct {
	mu          sync.Mutex
	refs        map[store.TableID]int
	fail        func(store.TableID, uint64) bool
	failErr     error
	failOnce    bool
	hold        holdSlot
	closed      bool
	registers   int
	unregisters int
}

// NewMemSchemaStore returns an empty, open schema store.
func NewMemSchemaStore() *MemSchemaStore {
	return &MemSchemaStore{refs: make(map[store.TableID]int)}
}

// RegisterTable implements [store.SchemaStore]. In order: a hold from
// BlockRegisterTable holds the call (it returns ctx's error if ctx is done
// first); a closed store returns [store.ErrClosed]; an installed failure returns
// its error; otherwise it takes the reference.
func (s *MemSchemaStore) RegisterTable(ctx context.Context, table store.TableID, startTs uint64) error {
	if err := s.hold.pass(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ErrClosed
	}
	if s.fail != nil && s.fail(table, startTs) {
		err := s.failErr
		if s.failOnce {
			s.fail = nil
		}
		return err
	}
	s.refs[table]++
	s.registers++
	return nil
}

// UnregisterTable implements [store.SchemaStore]. Releasing a table with no
// reference is a no-op (and is visible as a mismatch of
// [MemSchemaStore.Unregisters] and [MemSchemaStore.Registers]).
func (s *MemSchemaStore) UnregisterTable(table store.TableID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unregisters++
	if s.refs[table] > 0 {
		s.refs[table]--
		if s.refs[table] == 0 {
			delete(s.refs, table)
		}
	}
}

func (s *MemSchemaStore) setFail(pred func(store.TableID, uint64) bool, err error, once bool) {
	if err == nil {
		err = ErrInjected
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail, s.failErr, s.failOnce = pred, err, once
}

// FailOnce makes the next RegisterTable call fail with err (ErrInjected
// if nil).
func (s *MemSchemaStore) FailOnce(err error) {
	s.setFail(func(store.TableID, uint64) bool { return true }, err, true)
}

// FailAlways makes every RegisterTable call fail with err (ErrInjected if
// nil) until [MemSchemaStore.Heal].
func (s *MemSchemaStore) FailAlways(err error) {
	s.setFail(func(store.TableID, uint64) bool { return true }, err, false)
}

// FailIf makes every RegisterTable call for which pred holds fail with err
// (ErrInjected if nil) until [MemSchemaStore.Heal].
func (s *MemSchemaStore) FailIf(pred func(table store.TableID, startTs uint64) bool, err error) {
	s.setFail(pred, err, false)
}

// Heal removes any installed failure.
func (s *MemSchemaStore) Heal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = nil
}

// BlockRegisterTable makes RegisterTable calls wait until the returned
// hold is released. The hold stays installed until [MemSchemaStore.Unblock].
func (s *MemSchemaStore) BlockRegisterTable() *Hold { return s.hold.install() }

// Unblock removes the hold installed by BlockRegisterTable (without
// releasing calls it already holds).
func (s *MemSchemaStore) Unblock() { s.hold.remove() }

// Close makes every later RegisterTable fail with [store.ErrClosed].
func (s *MemSchemaStore) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
}

// Refs returns the number of references held on table.
func (s *MemSchemaStore) Refs(table store.TableID) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refs[table]
}

// TotalRefs returns the number of references held on all tables.
func (s *MemSchemaStore) TotalRefs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.refs {
		n += r
	}
	return n
}

// Registers returns the number of RegisterTable calls that took a
// reference.
func (s *MemSchemaStore) Registers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.registers
}

// Unregisters returns the number of UnregisterTable calls.
func (s *MemSchemaStore) Unregisters() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unregisters
}
