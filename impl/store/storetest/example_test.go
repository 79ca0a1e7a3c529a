package storetest_test

import (
	"context"
	"fmt"

	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
)

// A schema store that fails its first RegisterTable, as one still
// initialising does (F-R1).
func ExampleMemSchemaStore_FailOnce() {
	s := storetest.NewMemSchemaStore()
	s.FailOnce(nil)
	fmt.Println(s.RegisterTable(context.Background(), 42, 100))
	fmt.Println(s.RegisterTable(context.Background(), 42, 100))
	fmt.Println("references:", s.Refs(42))
	// Output:
	// storetest: injected RegisterTable failure
	// <nil>
	// references: 1
}

// The event store calls a subscriber's notifier until it is unregistered.
func ExampleEventStore_Notify() {
	es := storetest.NewMemEventStore()
	es.RegisterDispatcher("d1", store.Subscription{Table: 42}, store.NotifierFunc(func() { fmt.Println("notified d1") }))
	es.Notify("d1")
	es.UnregisterDispatcher("d1")
	fmt.Println("notify after unregister:", es.Notify("d1"))
	// Output:
	// notified d1
	// notify after unregister: false
}
