// Package daemon runs the protocol's roles as processes: a node (an event
// service over a Pebble event store, a schema store, its liveness and
// heartbeats, a maintainer), the coordinator (the drain controller and
// its periodic task), and the LogCoordinator. cmd/drainproofd is its
// command line; package transport carries the messages.
//
// It wires the library as harness/sim does inside one process, with real
// sockets and clocks instead of a bus and logical steps: a logical tick
// is a millisecond of the process's monotonic clock.
//
// # Rules it mirrors
//
//   - N1, N2: the node applies the coordinator's commands (transport's
//     NodeServer) and sends a heartbeat at once after a change and every
//     HeartbeatEvery otherwise; in the LogCoordinator transport its event
//     service reports every ReportEvery (L1: a live node re-reports, so
//     its cache entry never expires while it lives).
//   - N4: a node joins the coordinator with its epoch and protocol
//     version (§9); N6: each start takes a larger epoch, kept in a file of
//     its data directory.
//   - The maintainer: a node holds one table-trigger dispatcher of its own
//     changefeed in its own event service while ALIVE, and moves it off
//     (removes it) once DRAINING; its heartbeat carries the work left
//     (C7's maintainer term).
//   - C2, C3, C6: the coordinator's periodic task sends the command
//     coordinator.NextCommand returns and queries the LogCoordinator as
//     coordinator.NextQuery says; C9: a node that leaves (or is silent for
//     MemberTTL) is removed from membership.
//   - The SIGTERM path: [Node.Drain] asks the coordinator to drain the
//     node (C1) and returns once the drain completed (or the legacy
//     answer came), so the process exits only then.
//
// Metrics (Prometheus, package prometheus/client_golang, the library
// TiCDC's own metrics use): drainproof_dispatchers{broker},
// drainproof_registrations_refused_total, drainproof_drains_started_total,
// drainproof_drains_completed_total, drainproof_drain_seconds.
package daemon
