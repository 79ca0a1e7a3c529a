package store_test

import (
	"context"
	"fmt"

	"github.com/drainproof/drainproof/impl/store"
)

// A schema store that fails its first RegisterTable, as one still
// initialising does (F-R1).
func ExampleMemSchemaStore_FailOnce() {
	s := store.NewMemSchemaStore()
	s.FailOnce(nil)
	fmt.Println(s.RegisterTable(context.Background(), 42, 100))
	fmt.Println(s.RegisterTable(context.Background(), 42, 100))
	fmt.Println("references:", s.Refs(42))
	// Output:
	// store: injected RegisterTable failure
	// <nil>
	// references: 1
}

// The event store calls a subscriber's notifier until it is unregistered.
func ExampleMemEventStore() {
	es := store.NewMemEventStore()
	es.RegisterDispatcher("d1", store.Subscription{Table: 42}, store.NotifierFunc(func() { fmt.Println("notified d1") }))
	es.Notify("d1")
	es.UnregisterDispatcher("d1")
	fmt.Println("notify after unregister:", es.Notify("d1"))
	// Output:
	// notified d1
	// notify after unregister: false
}

// A puller writes a table's events in a batch and advances its resolved
// timestamp; a subscriber reads them in commit order.
func ExampleMemEventStore_WriteEvents() {
	es := store.NewMemEventStore()
	defer es.Close()
	es.RegisterDispatcher("d1", store.Subscription{Table: 42}, store.NotifierFunc(func() { fmt.Println("notified") }))
	_ = es.WriteEvents(42, []store.Event{
		{CommitTs: 12, Key: []byte("k2"), Value: []byte("b")},
		{CommitTs: 11, Key: []byte("k1"), Value: []byte("a")},
	})
	_ = es.AdvanceResolvedTs(42, 12)
	_ = store.ReadEvents(es, "d1", 0, es.ResolvedTs(42), func(e store.Event) bool {
		fmt.Println(e)
		return true
	})
	fmt.Printf("%+v\n", es.Resources())
	// Output:
	// notified
	// notified
	// ts=11 k1=a
	// ts=12 k2=b
	// {Batches:0 Iterators:0 Subscriptions:1}
}
