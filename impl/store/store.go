package store

import (
	"context"
	"errors"
)

// DispatcherID identifies a dispatcher across the cluster.
type DispatcherID string

// TableID identifies a table of the upstream cluster.
type TableID int64

// Subscription describes what a dispatcher subscribes to in the event
// store.
type Subscription struct {
	// Table is the table whose changes the dispatcher receives.
	Table TableID
	// StartTs is the timestamp the subscription starts from.
	StartTs uint64
	// OnlyReuse asks the store to accept the subscription only if it can
	// reuse an existing one (a remote probe).
	OnlyReuse bool
	// Token is opaque to the store, which hands it back to the notifier
	// with every call. A subscriber that registers one Notifier for
	// successive subscriptions (reusing it) tells by the token a call of
	// an earlier subscription, still under way, from one of the current.
	Token uint64
}

// Notifier is what an event store calls, on its own goroutines, when new
// data or a newer resolved timestamp is available for a subscriber. Notify
// may be called at any moment after RegisterDispatcher returned true and
// until UnregisterDispatcher returned (and by a call already under way
// then), with the Token of the subscription it was registered with. It
// is an interface, not a function, so that a subscriber that is already
// a pointer registers itself without allocating a closure.
type Notifier interface {
	Notify(token uint64)
}

// NotifierFunc adapts an ordinary function to [Notifier]; it ignores the
// token.
type NotifierFunc func()

// Notify calls f.
func (f NotifierFunc) Notify(uint64) { f() }

// EventStore is the store of change events a broker subscribes
// dispatchers to. Implementations must be safe for concurrent use.
type EventStore interface {
	// RegisterDispatcher subscribes id and attaches notify. It returns
	// false if the store refuses (closed, or an OnlyReuse miss); then
	// nothing is attached. Registering an id that is already subscribed
	// replaces its subscription.
	RegisterDispatcher(id DispatcherID, sub Subscription, notify Notifier) bool
	// UnregisterDispatcher detaches id's subscriber; when it returns,
	// id's notifier is no longer called. Unregistering an unknown id is a
	// no-op.
	UnregisterDispatcher(id DispatcherID)
}

// SchemaStore keeps table schemas with reference counts per table.
// Implementations must be safe for concurrent use.
type SchemaStore interface {
	// RegisterTable takes a reference on table's schema from startTs. It
	// may block (waiting for the schema to resolve) and may fail, e.g.
	// while the store is initialising; on failure no reference is taken.
	RegisterTable(ctx context.Context, table TableID, startTs uint64) error
	// UnregisterTable releases one reference taken by RegisterTable.
	UnregisterTable(table TableID)
}

// ErrClosed is returned by a store's calls after its Close.
var ErrClosed = errors.New("store: closed")
