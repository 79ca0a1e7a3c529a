package eventservice

import (
	"context"
	"sync"
	"sync/atomic"
)

// job is one entry of the request queue: a request queued by Submit (w
// and fn nil), a request of Do (w receives its outcome), or a function
// that Heartbeat, Cleanup or Snapshot runs in the loop (fn).
type job struct {
	req Request
	w   *waiter
	fn  func(context.Context)
	// ctx is the context of the Do that queued req (nil for Submit): a
	// request whose caller gave up is not run, and the store calls of
	// one that runs end when either ctx or Run's context is done.
	ctx context.Context
}

// waiter carries the outcome of one Do back to its caller. Waiters are
// pooled: a Do that received its outcome puts its waiter back; one that
// gave up (its context is done, or the loop stopped) leaves it to the
// garbage collector, since the loop may still send on it.
type waiter struct {
	done chan error // capacity 1: the loop never blocks on it
}

var waiters = sync.Pool{New: func() any { return &waiter{done: make(chan error, 1)} }}

// queue is the request queue: a FIFO under a mutex that the request loop
// empties a batch at a time, so that one wake-up of the loop runs every
// request queued meanwhile. Producers ring the doorbell only when the
// queue goes from empty to non-empty.
//
// Capacity: at most size requests wait; the batch the loop is running is
// no longer waiting, so producers refill the queue while the loop works
// (at most 2×size requests are queued or running). A producer that finds
// no room waits on room, which the loop closes when it takes a batch.
// Two arrays take turns: one holds the waiting jobs, the other the
// loop's batch. They grow as needed up to size and are kept, so that
// pushes stop allocating once the queue has been as long as it gets.
type queue struct {
	size int
	bell chan struct{} // capacity 1: the loop's wake-up

	mu      sync.Mutex
	items   []job         // waiting, in arrival order
	spare   []job         // the loop's last batch, reused for items
	room    chan struct{} // non-nil while a producer waits for room
	stopped bool          // the loop has returned; no more jobs
	n       atomic.Int32  // len(items), written under mu, read without it
}

func newQueue(size int) *queue {
	return &queue{size: size, bell: make(chan struct{}, 1)}
}

// push appends j, waiting for room while the queue is full. It returns
// ErrStopped once the loop has returned, or ctx's error.
func (q *queue) push(ctx context.Context, j job) error {
	for {
		q.mu.Lock()
		if q.stopped {
			q.mu.Unlock()
			return ErrStopped
		}
		if len(q.items) < q.size {
			q.items = append(q.items, j)
			q.n.Store(int32(len(q.items)))
			first := len(q.items) == 1
			q.mu.Unlock()
			if first {
				select {
				case q.bell <- struct{}{}:
				default: // already rung
				}
			}
			return nil
		}
		if q.room == nil {
			q.room = make(chan struct{})
		}
		room := q.room
		q.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// waiting reports whether a job waits. A push that happened before the
// call is seen; a concurrent one may or may not be.
func (q *queue) waiting() bool { return q.n.Load() > 0 }

// take returns the waiting jobs, oldest first, and empties the queue,
// waking the producers that wait for room (request loop only). It returns
// nil if nothing waits. The loop gives a batch back with done before it
// takes the next one.
func (q *queue) take() []job {
	q.mu.Lock()
	defer q.mu.Unlock()
	batch := q.items
	if len(batch) == 0 {
		return nil
	}
	q.items = q.spare[:0] // nil at first: append allocates
	q.spare = nil
	q.n.Store(0)
	if q.room != nil {
		close(q.room)
		q.room = nil
	}
	return batch
}

// done keeps the array of batch, which the loop has run, for reuse
// (request loop only).
func (q *queue) done(batch []job) {
	if batch == nil {
		return
	}
	clear(batch) // drop the requests' strings and waiters
	q.mu.Lock()
	defer q.mu.Unlock()
	q.spare = batch[:0]
}

// stop refuses every later push and drops the waiting jobs; their Do
// callers see the loop's stopped channel.
func (q *queue) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	clear(q.items)
	q.items = q.items[:0]
	q.n.Store(0)
	if q.room != nil {
		close(q.room)
		q.room = nil
	}
}
