package store

import (
	"errors"
	"fmt"
)

// Event is one change event of a table: a row's new value at a commit
// timestamp. Within a table, events are ordered by (CommitTs, Key); a
// second write of the same (CommitTs, Key) replaces the first.
type Event struct {
	CommitTs uint64
	Key      []byte
	Value    []byte
}

// String renders e like "ts=5 k1=v1".
func (e Event) String() string { return fmt.Sprintf("ts=%d %s=%s", e.CommitTs, e.Key, e.Value) }

// EventIterator reads a subscription's events in commit order. It holds
// store resources until Close, which must be called on every path, errors
// included (the store counts open iterators: [Resources]).
type EventIterator interface {
	// Next moves to the next event; it returns false at the end or on an
	// error (see Err).
	Next() bool
	// Event returns the current event; the caller owns its slices.
	Event() Event
	// Err returns the error that ended the iteration, if any.
	Err() error
	// Close releases the iterator. Calling it again is a no-op.
	Close() error
}

// DataStore is an [EventStore] with the data path: a puller writes each
// table's change events in batches and advances its resolved timestamp;
// a subscriber reads its table's events through an iterator and is
// notified (Notifier.Notify) after every write to its table and every
// newer resolved timestamp. [MemEventStore] and [PebbleEventStore]
// implement it, and one conformance test holds both to this contract.
type DataStore interface {
	EventStore
	// WriteEvents writes events of table in one batch, atomically: all
	// or none. Every event's CommitTs must be above the table's resolved
	// timestamp ([ErrBehindResolved] otherwise, and nothing is written).
	// The batch is closed on every path.
	WriteEvents(table TableID, events []Event) error
	// AdvanceResolvedTs promises that no event of table with a commit
	// timestamp at or below ts will be written; a ts not above the current
	// one is ignored.
	AdvanceResolvedTs(table TableID, ts uint64) error
	// ResolvedTs returns table's resolved timestamp (0 if none).
	ResolvedTs(table TableID) uint64
	// Iter returns an iterator over the events of id's subscription with
	// after < CommitTs <= upTo, in (CommitTs, Key) order, where after is
	// raised to the subscription's StartTs. It is a snapshot: later
	// writes are not seen. [ErrNotSubscribed] if id holds no subscription.
	Iter(id DispatcherID, after, upTo uint64) (EventIterator, error)
	// Resources returns the store's open batches, iterators and
	// subscriptions.
	Resources() Resources
	// Close closes the store: later registrations are refused and data
	// calls return [ErrClosed]. Iterators still open are closed and
	// reported in the error. Closing again is a no-op.
	Close() error
}

// Resources counts what a [DataStore] holds open. After every operation
// has returned and every iterator was closed, Batches and Iterators are
// zero; Subscriptions is the number of subscribed dispatchers.
type Resources struct {
	Batches       int64
	Iterators     int64
	Subscriptions int64
}

// Fault is an error path of a [DataStore]'s data path, where a fault
// injector ([WithFaultInjector]) can fail the step.
type Fault int8

// The fault points of the data path.
const (
	// FaultBatchSet fails a write batch's Set, after the batch is open.
	FaultBatchSet Fault = iota + 1
	// FaultBatchCommit fails a write batch's Commit.
	FaultBatchCommit
	// FaultIterOpen fails opening an iterator.
	FaultIterOpen
	// FaultIterNext fails an iterator's Next, after it is open.
	FaultIterNext
)

// Faults lists every fault point.
func Faults() []Fault { return []Fault{FaultBatchSet, FaultBatchCommit, FaultIterOpen, FaultIterNext} }

// String returns the fault point's name.
func (f Fault) String() string {
	switch f {
	case FaultBatchSet:
		return "BatchSet"
	case FaultBatchCommit:
		return "BatchCommit"
	case FaultIterOpen:
		return "IterOpen"
	case FaultIterNext:
		return "IterNext"
	}
	return fmt.Sprintf("Fault(%d)", int8(f))
}

// Data path errors.
var (
	// ErrNotSubscribed is returned by Iter for a dispatcher that holds no
	// subscription.
	ErrNotSubscribed = errors.New("store: dispatcher not subscribed")
	// ErrBehindResolved is wrapped by WriteEvents' error for an event at
	// or below the table's resolved timestamp.
	ErrBehindResolved = errors.New("store: event at or below the resolved timestamp")
	// ErrLeakedIterators is wrapped by Close's error when iterators were
	// still open.
	ErrLeakedIterators = errors.New("store: iterators still open at close")
)

// ReadEvents calls fn with each event of id's subscription with
// after < CommitTs <= upTo, in commit order, until fn returns false, and
// returns the iteration's error. It closes its iterator on every path.
func ReadEvents(s DataStore, id DispatcherID, after, upTo uint64, fn func(Event) bool) (err error) {
	it, err := s.Iter(id, after, upTo)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, it.Close()) }()
	for it.Next() {
		if !fn(it.Event()) {
			break
		}
	}
	return it.Err()
}
