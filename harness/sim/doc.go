// Package sim is a deterministic, seeded, in-process cluster that runs
// the whole drain protocol end to end: the coordinator (package
// coordinator), the drained node T (package node) with its real event
// service (package eventservice) over in-memory stores (package store),
// the LogCoordinator (package logcoord), collectors registering and
// removing dispatchers (late ones too), maintainers draining their work,
// a message bus with loss, duplication, delay and reordering, unplanned
// restarts, a peer of a legacy version for a while, T's version unknown
// after a rejoin, store faults, a stale LogCoordinator answering
// "unknown", and the upgrade controller that restarts T once its drain is
// reported complete.
//
// It mirrors tla/DrainRegistration.tla (package spec) as a whole: the
// step methods of [Cluster] are named after the model's actions, some of
// which run several of the model's steps in one call
// (Register: CollectorSendRegister, ServiceRecvRegister,
// BrokerAdmit, BrokerSubscribe or BrokerSubscribeRefused inside it;
// BrokerRegisterTable, BrokerRegisterTableFails, CollectorRemove,
// BrokerRemoveFinish; Restart for NodeCrashRestart and UpgradeRestart);
// each step that sends or takes a message is one action of its name
// (bus.go: NodeSendHeartbeat, NodeRecvCommand, ServiceSendReport,
// CoordSendDraining, CoordSendStopping, CoordSendQuery,
// CoordRecvHeartbeat, CoordRecvResponse, CoordRecvAnswer,
// LogCoordRecvReport, LogCoordAnswer (or LogCoordAnswerUnknown: the
// query taken), NetLose). The message kinds and liveness values are
// package node's (node.Kind, node.Liveness). [Cluster.Observe]
// with the coordinator's and the LogCoordinator's state gives the model's
// variables, so a test can run the model beside the cluster and compare
// them after every step (the rapid test in this package does).
//
// A collector's REGISTER travels as a message ([Cluster.CollectorSendRegister],
// [Cluster.ServiceRecvRegister], [Cluster.NetLoseRegister]): [Run]'s
// collectors send one at random, registered or not, and the bus delivers
// it late (maybe after T went STOPPING), twice (a re-registration that
// replaces the first) or never; a restart loses those in flight.
//
// A registration is held between its store steps by the test kit's holds (storetest.Hold)
// (its count raised, its subscription taken, RegisterTable not yet
// returned), and a removal inside UnregisterDispatcher, so the model's
// in-flight and half-removed states occur for real.
//
// # Measure
//
// [Run] counts completed drains, restarts and broken streams: dispatchers
// T still serves or holds (published, held between store steps, or
// subscribed) at a restart that a completed drain authorised (D5). The
// correct protocol never breaks a stream; `checker simulate` runs it.
// It also records how many events each drain took, how many drains were
// still open when the run's events ran out, and, with Config.Settle,
// whether those complete once the faults stop ([Summarise]).
//
// T's event service has one broker per upstream cluster
// (ClusterConfig.Clusters; Run uses two), each with its own stores, so
// a report is a sum over brokers. The bus delivers one message per event
// plus one for every eight in flight: a network carries messages in
// parallel, and with one message per event the LogCoordinator transport,
// which sends more messages per tick than one delivery per event carries,
// piled hundreds of messages up and took ten times as long to drain.
//
// # Data
//
// The run also moves real change events (data.go): producers commit them
// to the ordinary dispatchers' upstream tables, T's puller writes them in
// batches into T's event store (in memory or Pebble: [StoreKind]) and
// advances the resolved timestamps, and the changefeed's dispatchers read
// them through their subscriptions in T's store while the collectors
// hold them registered with T, from another node otherwise. At the end,
// [Cluster.Check] compares, per table, what the changefeed received with
// what was committed: lost, duplicated and out-of-order events, and
// re-deliveries after a crash (allowed: the collectors resume from the
// sink's checkpoint and deduplicate by commit ts). A restart that a
// completed drain authorised is not recovered by anybody (no stream may
// depend on it), so a dispatcher still registered with T loses the
// events it had not read, and the check names the first lost event with
// the drain that lost it.
//
// # Determinism
//
// No clock (logical ticks), no map iteration in decisions, one PCG
// generator seeded from Config.Seed: the same seed gives the same run.
// The event service runs requests on its Run goroutine or on the
// goroutine that calls Do, but the cluster waits for each request (or for
// it to be held by a gate) before it goes on.
package sim
