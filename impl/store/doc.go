// Package store defines the two stores an event broker registers a
// dispatcher with, [EventStore] and [SchemaStore], and in-memory
// implementations with fault injection for tests: [MemEventStore] and
// [MemSchemaStore].
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
