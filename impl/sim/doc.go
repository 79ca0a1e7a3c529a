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
// (CollectorRegister: CollectorSendRegister, ServiceRecvRegister,
// BrokerAdmit, BrokerSubscribe or BrokerSubscribeRefused inside it;
// BrokerRegisterTable, BrokerRegisterTableFails, CollectorRemove,
// BrokerRemoveFinish, NodeSendHeartbeat, NodeRecvCommand,
// ServiceSendReport, Restart for NodeCrashRestart and UpgradeRestart,
// CoordSendCommand for CoordSendDraining/CoordSendStopping, CoordRecv,
// LogCoordRecvReport, LogCoordAnswer, NetLose), and [Cluster.Observe]
// with the coordinator's and the LogCoordinator's state gives the model's
// variables, so a test can run the model beside the cluster and compare
// them after every step (the rapid test in this package does).
//
// A registration is held between its store steps by the stores' gates
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
//
// # Determinism
//
// No clock (logical ticks), no map iteration in decisions, one PCG
// generator seeded from Config.Seed: the same seed gives the same run.
// The event service runs requests on its Run goroutine or on the
// goroutine that calls Do, but the cluster waits for each request (or for
// it to be held by a gate) before it goes on.
package sim
