// Package store defines the two stores an event broker registers a
// dispatcher with, [EventStore] and [SchemaStore], and implementations
// with fault injection for tests: the in-memory [MemEventStore] and
// [MemSchemaStore], and [PebbleEventStore], an event store over Pebble as
// upstream TiCDC's is.
//
// # Data path
//
// [DataStore] is an EventStore that holds change events: a puller writes
// a table's events (commit timestamp, key, value) in batches
// (WriteEvents) and advances the table's resolved timestamp
// (AdvanceResolvedTs); a subscription reads its table's events from its
// StartTs in commit order through an iterator (Iter, [ReadEvents]) and its
// notifier is called after every write to its table and every newer
// resolved timestamp. Both event stores implement it over one shared
// engine (subscriptions, resolved timestamps, notifications, faults,
// counts); only the storage differs: sorted slices, or one Pebble key per
// event (table, commit timestamp, row key) in a directory that is removed
// on Close when the store created it. One conformance test runs against
// both.
//
// Resource discipline (TiCDC PR #4366, upstream's defer batch.Close() in
// writeEvents): every write batch and every iterator is closed on every
// path, errors included. [DataStore.Resources] counts open batches,
// iterators and subscriptions, and InjectFault fails each error path of
// the data path ([Faults]) once, so that a test can require every count
// back to zero after each failure. The bug LeakBatchOnError (package
// bugs, implementation-only) brings the leak back.
//
// Registering an ordinary dispatcher takes two store steps
// (docs/protocol.md §1): EventStore.RegisterDispatcher, which subscribes the dispatcher and
// starts notifications, and SchemaStore.RegisterTable, which takes a
// reference on the table's schema and can fail, for instance while the
// schema store is still initialising (F-R1). Table-trigger
// dispatchers touch neither store.
//
// The in-memory stores record exactly the state the model tracks per
// dispatcher in tla/DrainRegistration.tla: the variable subscribed is
// [MemEventStore.Subscribed], and schemaRef is a positive
// [MemSchemaStore.Refs] for the dispatcher's table. Their fault switches
// drive the model's store actions: a refusing event store gives
// BrokerSubscribeRefused; a failing RegisterTable gives
// BrokerRegisterTableFails; a blocked RegisterTable, or a blocked
// UnregisterDispatcher, holds the broker between two steps so that a test
// can observe the middle of an add or a remove (R2).
//
// Rules the in-memory stores help check: R2 (no hidden registration), R3
// (failure cleanup: no subscriber, no extra reference), R4 (no
// notification after removal: [MemEventStore.Notify] calls the live
// notifier, which the broker drops once it marked the dispatcher removed),
// R9 (schema references balanced).
package store
