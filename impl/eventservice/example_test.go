package eventservice_test

import (
	"context"
	"fmt"

	"github.com/drainproof/drainproof/impl/eventservice"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
)

// A node's event service: register a dispatcher, see a STOPPING report
// count it with admission closed, refuse a late registration, and report a
// final zero once the dispatcher is removed.
func Example() {
	es, ss := storetest.NewMemEventStore(), storetest.NewMemSchemaStore()
	svc, err := eventservice.New(eventservice.Config{
		NewStores: func(eventservice.ClusterID) (store.EventStore, store.SchemaStore) { return es, ss },
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wait := svc.Start(ctx) // the request loop, on its own goroutine
	defer func() { cancel(); _ = wait() }()

	reg := eventservice.Request{Action: eventservice.Register, Cluster: "c1", Changefeed: "cf1", Dispatcher: "d1", Table: 42, StartTs: 100}
	fmt.Println("register:", svc.Do(ctx, reg))

	svc.CloseAdmission() // the node went STOPPING
	fmt.Println(svc.Sample())

	late := reg
	late.Dispatcher = "d2"
	fmt.Println("late register:", svc.Do(ctx, late))

	remove := eventservice.Request{Action: eventservice.Remove, Cluster: "c1", Dispatcher: "d1"}
	fmt.Println("remove:", svc.Do(ctx, remove))
	fmt.Println(svc.Sample())
	// Output:
	// register: <nil>
	// 1 true
	// late register: eventservice: admission closed
	// remove: <nil>
	// 0 true
}
