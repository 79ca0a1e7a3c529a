// Package store defines the two stores an event broker registers a
// dispatcher with, [EventStore] and [SchemaStore], and two event stores:
// [PebbleEventStore], over Pebble as upstream TiCDC's is, and the
// in-memory [MemEventStore]. Their test kit (fault switches, an in-memory
// schema store, the conformance suite) is package storetest.
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
// on Close when the store created it. One conformance suite
// (storetest.TestDataStore) holds both to the contract.
//
// Durability: [PebbleEventStore] keeps every batch WriteEvents
// acknowledged across a clean Close and across a crash of the process
// (write-ahead log on, each commit synced), and a crash in the middle of a
// batch leaves none of it (TestPebbleDurableAcrossClose,
// TestPebbleKillMidBatch). [MemEventStore] keeps nothing past its life.
//
// Resource discipline (TiCDC PR #4366, upstream's defer batch.Close() in
// writeEvents): every write batch and every iterator is closed on every
// path, errors included. [DataStore.Resources] counts open batches,
// iterators and subscriptions; a fault injector ([WithFaultInjector], the
// seam storetest uses) can fail each error path of the data path
// ([Faults]), so that a test can require every count back to zero after
// each failure. The bug LeakBatchOnError (package
// bugs, implementation-only) brings the leak back.
//
// Registering an ordinary dispatcher takes two store steps
// (docs/protocol.md §1): EventStore.RegisterDispatcher, which subscribes the dispatcher and
// starts notifications, and SchemaStore.RegisterTable, which takes a
// reference on the table's schema and can fail, for instance while the
// schema store is still initialising (F-R1). Table-trigger
// dispatchers touch neither store.
//
// Usage:
//
//	es, err := store.OpenPebbleEventStore(ctx, dir)
//	if err != nil { ... }
//	defer es.Close()
//	es.RegisterDispatcher(id, store.Subscription{Table: t, StartTs: ts}, notifier)
//	_ = es.WriteEvents(t, events)          // the puller
//	_ = es.AdvanceResolvedTs(t, resolved)
//	_ = store.ReadEvents(es, id, after, resolved, func(e store.Event) bool { ...; return true })
package store
