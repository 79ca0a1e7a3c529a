// Package cluster runs drainproof as a real cluster and checks the run:
// a LogCoordinator, a coordinator and N node processes of the drainproofd
// binary on 127.0.0.1, each node behind a TCP fault proxy, producers that
// commit change events to the tables' home nodes and collectors that
// register dispatchers over gRPC and read the events; a rolling upgrade
// (one legacy node, every node drained by SIGTERM, stopped and restarted
// as the new version) and a seeded fault schedule (SIGKILL, a node's
// included in the middle of a Pebble write; SIGSTOP/SIGCONT longer than
// the LogCoordinator's TTL; partitions of a node from the coordinator or
// the LogCoordinator; delay and loss in front of a node). It is `checker
// cluster`'s engine (docs/cluster.md).
//
// What a run checks, each a violation (exit 1 for the command):
//
//   - per table, across restarts and the upgrade: every event the producer
//     got acknowledged is read by the collector, once, in commit order,
//     with its value (no loss, duplicate or reordering);
//   - D5 at the gRPC boundary: no drain completes (a node's "drain done"
//     with complete) while a dispatcher whose REGISTER that process
//     answered OK had no REMOVE sent before the completion;
//   - a drain (SIGTERM to exit) ends within DrainBound of its start, or
//     of the end of the faults if later;
//   - every process restarts.
//
// The run also records what happened to each process, in time order
// (Result.Timeline: starts, restarts, SIGTERM, liveness seen, drain done,
// exit, the collectors' dispatchers registered with each node), which
// checker cluster --html draws, and, with a bug switched on, whether some
// process ran the bug's code (Result.BugsReached).
//
// It is harness: it imports the product's transport (its generated
// client) and never the other way round.
package cluster
