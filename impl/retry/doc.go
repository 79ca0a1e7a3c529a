// Package retry runs an operation again until it succeeds, following the
// store-creation retry rule of the registration protocol
// (docs/protocol.md §5, fix (b) of F-R1).
//
// The rule, as [IsRetryable] states it:
//
//   - an error whose cause is [context.Canceled] while the caller's context
//     is also done is final: the caller gave up, so stop;
//   - an error whose cause is [context.Canceled] while the caller's context
//     is still live came from inside the client (a PD/TSO client being
//     rebuilt, say), so try again;
//   - any other error is retried.
//
// [Do] also returns at once when the caller's context is done before an
// attempt or during a backoff, stops after a bounded number of attempts,
// and waits a capped, jittered exponential backoff between attempts. Its
// clock and its randomness are injectable ([Policy].Clock, [Policy].Rand),
// so tests take no real time and are deterministic.
//
// Why it matters: a schema store creates its keyspace storage with
// context.Background(); before the fix an internal cancellation failed the
// first try, RegisterTable failed, and the dispatcher's registration
// failed (issue #4285). The registration side's cleanup of that failure is
// the business of package eventservice (R3/R4); this package makes the
// failure rarer.
//
// store.OpenPebbleEventStore opens a Pebble event store under it (a
// directory still locked by the process shutting down before a restart
// fails the first open), and the simulator (package sim) opens T's Pebble
// stores with it.
//
// The TLA+ model (tla/DrainRegistration.tla) abstracts the retry into the
// nondeterministic BrokerRegisterTableFails action; this package is the
// implementation-side refinement of "RegisterTable may fail".
package retry
