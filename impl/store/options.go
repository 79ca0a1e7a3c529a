package store

import "github.com/drainproof/drainproof/impl/retry"

// Option configures an event store at construction ([NewMemEventStore],
// [NewPebbleEventStore], [OpenPebbleEventStore]).
type Option func(*options)

type options struct {
	inject func(Fault) error
	retry  retry.Policy
}

// WithFaultInjector makes the store call inject at each fault point of its
// data path ([Faults]) before the step; a non-nil error fails the step
// with that error, on the path a real failure there would take. It is the
// seam fault-injection tests use (package storetest); a production store
// has none. inject may be called with the store's writer lock held, so it
// must not call back into the store, and it must be safe for concurrent
// use.
func WithFaultInjector(inject func(Fault) error) Option {
	return func(o *options) { o.inject = inject }
}

// WithOpenRetry sets the policy under which [OpenPebbleEventStore] retries
// a failed open (package retry: the store-creation retry rule). Without
// it, OpenPebbleEventStore retries under retry.Policy's defaults; the
// other constructors ignore it.
func WithOpenRetry(p retry.Policy) Option {
	return func(o *options) { o.retry = p }
}
