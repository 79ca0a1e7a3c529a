// Package node is the drained node's side of the drain protocol: its
// liveness, its process epoch, its answers to the coordinator's liveness
// commands, its heartbeats and the protocol version it announces.
//
// It mirrors the node actions of the TLA+ module tla/DrainRegistration.tla
// (package spec): [Node.RecvCommand] is NodeRecvCommand, [Node.Heartbeat]
// and [Node.Tick] are NodeSendHeartbeat, [Node.Report] is
// ServiceSendReport, and a new [Node] (a larger epoch, ALIVE) is Restart
// (NodeCrashRestart, UpgradeRestart). The message types ([Command],
// [Response], [Heartbeat], [Report]) carry the fields of the model's
// Cmd, Resp, Hb and Report records.
//
// # Rules implemented
//
// From docs/protocol.md §4 and §10:
//
//   - D1 (monotone liveness): [LivenessStore.Advance] moves liveness one
//     step forward by compare-and-swap, ALIVE → DRAINING → STOPPING;
//     skips and rollbacks are refused.
//   - N1 / D2: a command applies only for the node's own epoch; the
//     response always carries the node's real epoch and liveness, so the
//     coordinator learns it.
//   - N2: a heartbeat is forced after a liveness change and otherwise
//     throttled to one per heartbeat interval; the throttle's timestamp
//     moves before the send.
//   - Variant H: in the heartbeat transport the heartbeat carries the event
//     service's (count, admission closed), sampled after liveness, through
//     [Counter.Sample], which closes admission first when the node is
//     STOPPING (E1/E3); a response never carries a count (F2).
//   - Variant L: [Node.Report] is the event service's report to the
//     LogCoordinator, tagged with the node's epoch.
//   - §9: the node announces its drain protocol version
//     ([VersionLegacy], [VersionDrain], [VersionBrokerDrain]).
//
// # Determinism
//
// A Node has no goroutines and reads no clock: time is the logical tick
// the caller passes in. It is safe for concurrent use.
//
// # Bug zoo
//
// Built with -tags bugs, the fault point of NodeAcceptsSkip (package
// bugs) lets [LivenessStore.Advance] take any forward step, a skip from
// ALIVE to STOPPING included; the normal build compiles it out.
package node
