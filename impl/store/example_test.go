package store_test

import (
	"fmt"

	"github.com/drainproof/drainproof/impl/store"
)

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
