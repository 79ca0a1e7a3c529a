package eventservice

import (
	"context"
	"sync"
)

// job is one entry of the request queue: a request queued by Submit (w
// and fn nil), a request of Do (w receives its outcome), or a function
// that Heartbeat, Cleanup or Snapshot runs in the loop (fn).
type job struct {
	req Request
	w   *waiter
	fn  func(context.Context)
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
// Capacity: the requests waiting plus those of the batch the loop is
// running never exceed size; a producer that finds no room waits on room,
// which the loop closes when it finishes a batch.
type queue struct {
	size int
	bell chan struct{} // capacity 1: the loop's wake-up

	mu      sync.Mutex
	items   []job         // waiting, in arrival order
	spare   []job         // the loop's last batch, reused for items
	held    int           // length of the batch the loop is running
	room    chan struct{} // non-nil while a producer waits for room
	stopped bool          // the loop has returned; no more jobs
}

func newQueue(size int) *queue {
	return &queue{
		size:  size,
		bell:  make(chan struct{}, 1),
		items: make([]job, 0, size),
		spare: make([]job, 0, size),
	}
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
		if len(q.items)+q.held < q.size {
			q.items = append(q.items, j)
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

// take returns the waiting jobs, oldest first, and empties the queue; the
// batch counts against the capacity until done (request loop only). It
// returns an empty batch if nothing waits.
func (q *queue) take() []job {
	q.mu.Lock()
	defer q.mu.Unlock()
	batch := q.items
	q.items = q.spare[:0]
	q.spare = nil
	q.held = len(batch)
	return batch
}

// done gives back the capacity of batch, which the loop has run, and
// keeps its array for reuse (request loop only).
func (q *queue) done(batch []job) {
	clear(batch) // drop the requests' strings and waiters
	q.mu.Lock()
	defer q.mu.Unlock()
	q.held = 0
	q.spare = batch[:0]
	if q.room != nil {
		close(q.room)
		q.room = nil
	}
}

// stop refuses every later push and drops the waiting jobs; their Do
// callers see the loop's stopped channel.
func (q *queue) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	clear(q.items)
	q.items = q.items[:0]
	q.held = 0
	if q.room != nil {
		close(q.room)
		q.room = nil
	}
}
