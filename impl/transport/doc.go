// Package transport carries the drain-and-registration protocol's
// messages (docs/protocol.md §3) between processes over gRPC: the wire
// types are generated from pb/drainproof.proto (make proto), and this
// package adapts them to the library's types and calls.
//
// The library packages (eventservice, node, coordinator, logcoord,
// store) stay free of gRPC: the servers here wrap them, and the clients
// are plain generated stubs behind [Dial], whose interceptor puts a
// deadline on every call that has none (DefaultCallTimeout).
//
// # Rules it keeps at the boundary
//
//   - R7 / the request's context: [EventServer.Dispatch] hands the gRPC
//     request's context (with its deadline) to eventservice.Service.Do,
//     which carries it into every store call the request causes; a
//     client that gives up releases a blocked RegisterTable, the
//     registration is rolled back (R3) and the loop serves the next
//     dispatcher.
//   - E2 / R8: a registration refused by the closed admission gate is
//     answered ADMISSION_CLOSED; a refused remote probe (only_reuse)
//     NOT_REUSABLE, so the collector tries elsewhere.
//   - N1: [NodeServer.SetLiveness] applies the coordinator's command and
//     answers with the node's own epoch and liveness, never a count
//     (F2); a change forces a heartbeat (OnChange).
//   - L2 / L3: [LogCoordServer] caches reports and answers queries with
//     the cache's answer, "unknown" included (F7). A report carries its
//     sequence number (node.Report.Seq, [ReportToPB]), so an older report
//     delivered late does not refresh the cached entry (TiCDC #6155).
//
// With mutual TLS ([LoadTLS], [TLS.ServerOptions], [TLS.DialOption]),
// every connection is TLS 1.3 with certificates verified both ways, and
// [Access] decides, by the caller's certificate identity, who may call
// what (the operator alone drains other nodes; only the coordinator
// commands a node; a node speaks only for itself). The model assumes a
// message comes from the process it names; this makes it so on the wire.
//
// Every handler checks its message first (an unknown node, an epoch of 0,
// a negative table, an oversized batch) and answers InvalidArgument
// without touching the library. The one dependency added for it is
// google.golang.org/grpc (with google.golang.org/protobuf): the transport
// TiCDC itself uses between its processes.
package transport
