// Package storetest is the test kit of package store, as net/http/httptest
// and testing/fstest are the standard library's: what a test needs of the
// stores, kept out of the product.
//
//   - [EventStore] puts fault switches around an event store: it refuses
//     registrations ([EventStore.Refuse], the model's
//     BrokerSubscribeRefused), holds unregistrations between two steps
//     ([EventStore.BlockUnregister], R2), fails the data path's fault
//     points once each ([EventStore.InjectFault], through the store's
//     [store.WithFaultInjector] seam), and records what the model tracks
//     per dispatcher: the variable subscribed is [EventStore.Subscribed].
//   - [MemSchemaStore] is an in-memory schema store that counts references
//     per table (the model's schemaRef is a positive [MemSchemaStore.Refs])
//     and can fail (BrokerRegisterTableFails) or hold RegisterTable.
//   - [Hold] is the latch both hand out: wait on Entered, look, Release.
//   - [TestDataStore] is the conformance suite of the [store.DataStore]
//     contract, for anyone who writes another event store.
//
// Rules the kit helps check (docs/protocol.md): R2 (no hidden
// registration), R3 (failure cleanup: no subscriber, no extra reference),
// R4 (no notification after removal: [EventStore.Notify] calls the live
// notifier, which the broker drops once it marked the dispatcher removed),
// R9 (schema references balanced).
package storetest
