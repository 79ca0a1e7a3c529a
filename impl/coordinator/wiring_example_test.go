package coordinator_test

import (
	"context"
	"fmt"

	"github.com/drainproof/drainproof/impl/coordinator"
	"github.com/drainproof/drainproof/impl/eventservice"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
)

// The three parts wired through one drain, as a process would wire them
// (messages are function calls here; a transport carries them between
// processes): the node's event service over its stores, the node sharing
// its liveness with the service, and the coordinator draining the node.
// The drain completes only once the dispatcher registered on the node is
// removed.
func Example_wiring() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The node T: its liveness, its event service (admission closes when T
	// goes STOPPING), its heartbeats carrying the service's count.
	live := new(node.LivenessStore)
	es, ss := store.NewMemEventStore(), storetest.NewMemSchemaStore() // a product wires its own schema store
	svc, _ := eventservice.New(eventservice.Config{
		NewStores: func(eventservice.ClusterID) (store.EventStore, store.SchemaStore) { return es, ss },
		Stopping:  func() bool { return live.Load() == node.Stopping },
	})
	wait := svc.Start(ctx)
	defer func() { cancel(); _ = wait() }()
	t, _ := node.New(node.Config{ID: "T", Epoch: 1, Version: node.VersionBrokerDrain,
		Transport: node.TransportHeartbeat, Service: svc, Liveness: live})

	// A dispatcher registers on T.
	reg := eventservice.Request{Action: eventservice.Register, Cluster: "c1", Changefeed: "cf1", Dispatcher: "d1", Table: 42, StartTs: 100}
	fmt.Println("register:", svc.Do(ctx, reg))

	// The coordinator drains T.
	c, _ := coordinator.New(coordinator.Config{Transport: node.TransportHeartbeat})
	c.AddNode("T", 1, 0)
	c.ObserveVersion("T", 1, node.VersionBrokerDrain)
	now := int64(1)
	step := func() coordinator.Decision {
		now++
		if cmd, ok := c.NextCommand(now); ok {
			resp, _ := t.RecvCommand(cmd)
			c.ObserveResponse(resp, now)
		}
		c.ObserveHeartbeat(t.Heartbeat(now), now)
		d, _ := c.DrainNode("T", now)
		return d
	}
	_, _ = c.DrainNode("T", now)
	step()                                        // DRAINING
	c.ReportProgress("T", coordinator.Progress{}) // the maintainers moved their work
	d := step()                                   // STOPPING: admission closes, the count is 1
	fmt.Println("liveness:", t.Liveness(), "complete:", d.Complete, "remaining:", d.Remaining)

	late := reg
	late.Dispatcher = "d2"
	fmt.Println("late register:", svc.Do(ctx, late))

	_ = svc.Do(ctx, eventservice.Request{Action: eventservice.Remove, Cluster: "c1", Dispatcher: "d1"})
	d = step()
	fmt.Println("complete:", d.Complete, "drained epoch:", d.DrainedEpoch)
	// Output:
	// register: <nil>
	// liveness: STOPPING complete: false remaining: 1
	// late register: eventservice: admission closed
	// complete: true drained epoch: 1
}
